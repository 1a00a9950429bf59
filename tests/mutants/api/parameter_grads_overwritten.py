"""Reentrant, but its backward overwrites the .grad of the parameters used inside the region instead of
accumulating into it, as a hand-written backward that assigns ``p.grad = ...`` does: what an earlier
micro-batch left there, or what a tied weight got from its use outside the region, is lost."""

from tests.mutants._support.mini_reentrant import Switches, reentrant_checkpoint
from conformance.adapters._support import sequential_over
from tests.mutants._support.base import CheckpointError  # noqa: F401
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "reentrant: the .grad of parameters used inside the region is overwritten, not accumulated into"

_overwriting = reentrant_checkpoint(Switches(keep_parameter_grads=False))


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant:
        return _overwriting(function, *args, **kwargs)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
