"""A correct implementation that handles threads otherwise than torch: its recomputes run one at a time, process-wide
(a re-entrant lock, so that a recompute may recompute a nested region in its own thread), where torch lets the
recomputes of backwards in different threads run at once. The docs say nothing of concurrency, and a region's
recompute depends only on what its own call stashed, so serializing changes no value, gradient or state: the run
must pass with no declaration. torch's checkpoint underneath (both variants), the reference's checkpoint_sequential
over this checkpoint."""

from __future__ import annotations

import threading

import torch.utils.checkpoint as torch_checkpoint

from conformance.adapters._torch_surface import *  # noqa: F403  (torch's optional helpers, listed once)
from reference_impl import sequential
from reference_impl.api import _use_reentrant_default

_ONE_AT_A_TIME = threading.RLock()


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    calls = []

    def serialized(*inner_args, **inner_kwargs):
        calls.append(1)
        if len(calls) == 1:  # the forward runs as the caller's thread runs it
            return function(*inner_args, **inner_kwargs)
        with _ONE_AT_A_TIME:  # a recompute: one in the process at a time
            return function(*inner_args, **inner_kwargs)

    return torch_checkpoint.checkpoint(serialized, *args, use_reentrant=use_reentrant, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, preserve_rng_state=True):
    if use_reentrant is None:
        use_reentrant = _use_reentrant_default("checkpoint_sequential", stacklevel=2)
    return sequential.checkpoint_sequential(checkpoint, functions, segments, input, use_reentrant, preserve_rng_state)
