"""Reentrant, but its backward differentiates the recompute with respect to the region's inputs only
(autograd.grad(outputs, inputs) instead of an inner backward), so parameters and other tensors used
inside the region never get a gradient. Every test that compares parameter gradients under the
reentrant variant flags it, not only api.same-gradients'."""

from tests.mutants._support.mini_reentrant import Switches, reentrant_checkpoint
from conformance.adapters._support import sequential_over
from tests.mutants._support.base import CheckpointError  # noqa: F401
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "reentrant: closed-over parameters and tensors used inside the region get no gradient"

_inputs_only = reentrant_checkpoint(Switches(accumulate_into_parameters=False))


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant:
        return _inputs_only(function, *args, **kwargs)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
