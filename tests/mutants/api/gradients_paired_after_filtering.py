"""Reentrant, but its backward pairs the output gradients with the recomputed outputs after leaving out
those that do not require grad: the n-th output requiring grad gets the n-th tensor output's gradient. A
mask, indices or lengths returned before the differentiable outputs shift every gradient by one."""

from tests.mutants._support.mini_reentrant import Switches, reentrant_checkpoint
from conformance.adapters._support import sequential_over
from tests.mutants._support.base import CheckpointError  # noqa: F401
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "reentrant: an integral output before the differentiable ones shifts their gradients"

_misaligned = reentrant_checkpoint(Switches(pair_gradients_by_output=False))


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant:
        return _misaligned(function, *args, **kwargs)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
