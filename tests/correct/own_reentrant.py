"""A correct implementation of the kind libraries write: its own reentrant variant (the reference's
autograd.Function, with its own argument checks) beside torch's non-reentrant one, and its own
checkpoint_sequential over both. No declarations: where it differs from torch on what the docs leave
open (BatchNorm's running statistics in the recompute: a SHOULD), the run must still pass."""

import warnings

import torch.utils.checkpoint as torch_checkpoint
from torch.utils.checkpoint import noop_context_fn

from conformance.adapters._torch_surface import *  # noqa: F403  (torch's optional helpers, listed once)
from reference_impl import reentrant, sequential


def _explicit(use_reentrant, where: str) -> bool:
    if use_reentrant is None:
        warnings.warn(f"{where}: pass use_reentrant explicitly (False is recommended); using the reentrant "
                      "variant", UserWarning, stacklevel=3)
        return True
    return bool(use_reentrant)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, debug=False, **kwargs):
    if not _explicit(use_reentrant, "checkpoint"):
        return torch_checkpoint.checkpoint(function, *args, use_reentrant=False, context_fn=context_fn,
                                           debug=debug, **kwargs)
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    kwargs.pop("determinism_check", None)  # documented: always disabled in the reentrant variant
    kwargs.pop("early_stop", None)  # the reentrant variant always recomputes everything
    if context_fn is not noop_context_fn or debug:
        raise ValueError("context_fn and debug are only supported when use_reentrant=False")
    if kwargs:
        raise ValueError(f"unexpected keyword arguments: {', '.join(kwargs)}")
    return reentrant.checkpoint(function, args, preserve_rng_state)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, preserve_rng_state=True):
    return sequential.checkpoint_sequential(checkpoint, functions, segments, input,
                                            _explicit(use_reentrant, "checkpoint_sequential"), preserve_rng_state)
