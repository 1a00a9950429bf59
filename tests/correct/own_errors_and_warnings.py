"""A correct implementation whose errors and warnings are of other types, and in other words, than torch's
wherever the docs name none: the reference implementation (both variants written from the docs) with its
own signals.

- an omitted use_reentrant: a FutureWarning (torch: UserWarning), in its own words (which still name
  use_reentrant: that is what the warning is about);
- a reentrant checkpoint none of whose inputs requires grad: a RuntimeWarning (torch: UserWarning);
- use_reentrant=True with context_fn, debug or keywords for the function, an unknown determinism_check,
  torch.autograd.grad or backward(inputs=...) through a reentrant checkpoint, more than one input to
  checkpoint_sequential: CheckpointUsageError, an Exception of its own (torch: ValueError, RuntimeError,
  TypeError).

The docs say "a warning", "will raise an error", "only supported if use_reentrant=False": any type
satisfies them, so the run must pass with no declaration. Where the docs name the type it keeps it: the
function's own exceptions propagate unchanged, the determinism check raises CheckpointError."""

from __future__ import annotations

import warnings

import torch

from reference_impl import *  # noqa: F403  (the reference's helpers: CheckpointError, GraphExecGroup, ...)
from reference_impl import non_reentrant, reentrant, sequential
from reference_impl.non_reentrant import DETERMINISM_CHECKS, noop_context_fn
from reference_impl.rng import ForwardState


class CheckpointUsageError(Exception):
    """A call this checkpoint does not support."""


def _variant(use_reentrant, where: str) -> bool:
    if use_reentrant is None:
        warnings.warn(f"{where} was called without use_reentrant, so it runs the reentrant variant; say which "
                      "you want with use_reentrant=False (better) or use_reentrant=True.", FutureWarning, stacklevel=3)
        return True
    return bool(use_reentrant)


class _Checkpoint(reentrant._Checkpoint):
    """The reference's reentrant Function, rejecting torch.autograd.grad and backward(inputs=...) its own way."""

    @staticmethod
    def backward(ctx, *grad_outputs):
        if not torch.autograd._is_checkpoint_valid():
            raise CheckpointUsageError("a reentrant checkpoint can only be differentiated by .backward() with no "
                                       "inputs: it cannot tell torch.autograd.grad which gradients to return")
        return reentrant._Checkpoint.backward(ctx, *grad_outputs)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, preserve_rng_state=True, **kwargs):
    if determinism_check not in DETERMINISM_CHECKS:
        raise CheckpointUsageError(f"no determinism check is called {determinism_check!r}: "
                                   f"choose one of {', '.join(DETERMINISM_CHECKS)}")
    if not _variant(use_reentrant, "checkpoint"):
        return non_reentrant.checkpoint(function, args, kwargs, preserve_rng_state=preserve_rng_state,
                                        context_fn=context_fn, determinism_check=determinism_check, debug=debug,
                                        early_stop=early_stop)
    if context_fn is not noop_context_fn or debug or kwargs:
        raise CheckpointUsageError("the reentrant checkpoint takes no context_fn, no debug and no keyword arguments "
                                   "for the function")
    if not any(isinstance(arg, torch.Tensor) and arg.requires_grad for arg in args):
        warnings.warn("reentrant checkpoint: no tensor argument requires grad, so the region's parameters "
                      "will get no gradient from it", RuntimeWarning, stacklevel=2)
    return _Checkpoint.apply(function, ForwardState(args, {}, preserve_rng_state), *args)


def checkpoint_sequential(functions, segments, input, *more_inputs, use_reentrant=None, preserve_rng_state=True):
    if more_inputs:
        raise CheckpointUsageError(f"checkpoint_sequential takes one input, not {1 + len(more_inputs)}")
    return sequential.checkpoint_sequential(checkpoint, functions, segments, input,
                                            _variant(use_reentrant, "checkpoint_sequential"), preserve_rng_state)
