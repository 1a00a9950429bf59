"""torch's selective activation checkpointing (SAC), with a fixed policy: save matmuls, recompute the rest.

``torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False, context_fn=...)`` where ``context_fn``
builds ``create_selective_checkpoint_contexts`` over the matmul-family ops: their outputs are cached in
the forward and reused in the recompute, every other op (pointwise, dropout, reductions) is recomputed.
This is the usual production policy (cheap ops recomputed, expensive ones kept). SAC exists only for the
non-reentrant variant. A caller's own ``context_fn`` is entered inside the SAC contexts, so the policy
still applies and the caller's contexts see every op the function issues.
"""

from __future__ import annotations

import contextlib
import functools

import torch
from conformance.adapters._support import distribution_version, no_checkpoint_sequential
from torch.utils.checkpoint import (  # noqa: F401  (torch's global switches apply to SAC too)
    CheckpointError,
    CheckpointPolicy,
    GraphExecGroup,
    create_selective_checkpoint_contexts,
    noop_context_fn,
    set_checkpoint_debug_enabled,
    set_checkpoint_early_stop,
)

__version__ = distribution_version("torch")
NAME = "torch selective activation checkpointing"

CONFORMANCE_CAPABILITIES = {
    "variants": ["non_reentrant"],
    "features": [
        "preserve_rng_state", "kwargs", "context_fn", "determinism_check", "debug", "early_stop",
        "selective_checkpointing", "graph_exec_group",
    ],
    "devices": ["cpu", "cuda"],
}

_aten = torch.ops.aten
SAVED_OPS = [_aten.mm.default, _aten.addmm.default, _aten.bmm.default, _aten.baddbmm.default]


def _stacked(outer, inner):
    """One context manager entering ``outer`` then ``inner`` (eager checkpointing accepts any context manager)."""

    @contextlib.contextmanager
    def both():
        with outer, inner:
            yield

    return both()


def sac_context_fn(user_context_fn=noop_context_fn):
    forward, recompute = create_selective_checkpoint_contexts(SAVED_OPS)
    user_forward, user_recompute = user_context_fn()
    return _stacked(forward, user_forward), _stacked(recompute, user_recompute)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, **kwargs):
    # use_reentrant is passed on: torch itself rejects context_fn with use_reentrant=True (ValueError).
    return torch.utils.checkpoint.checkpoint(
        function,
        *args,
        use_reentrant=False if use_reentrant is None else use_reentrant,
        context_fn=functools.partial(sac_context_fn, context_fn),
        **kwargs,
    )


checkpoint_sequential = no_checkpoint_sequential(NAME)
