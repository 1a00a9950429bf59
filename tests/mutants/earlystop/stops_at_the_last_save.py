"""The reference's non-reentrant checkpoint, stopping its recompute at the very save that refills the last slot,
even in the middle of an op that saves a tensor and then writes into it (rrelu's noise buffer): what torch 2.13
does (pytorch/pytorch#193671). Built on a private copy of the reference (torch itself fails the clause)."""

from reference_impl import *  # noqa: F403
from tests.mutants._support.reference_copy import private_reference

TARGET_CLAUSES = ["earlystop.needed-tensors-complete"]
BREAKS = "early stop ends the recompute at the last save, before the op that saved the tensor has written it"

_frame, _api = private_reference("stops_at_the_last_save")


class _StopAtTheSave(_frame._EarlyStop):
    """Never says a torch call is running, so the save that refills the last slot stops the recompute at once."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = _frame.OutsideStateKept.__torch_function__(self, func, types, args, kwargs)
        if self.run.refilled:
            raise _frame._StopRecomputation
        return out


_frame._EarlyStop = _StopAtTheSave
CheckpointError = _frame.CheckpointError
checkpoint = _api.checkpoint
checkpoint_sequential = _api.checkpoint_sequential
