"""The reference's non-reentrant checkpoint treating every read of a saved tensor outside backward
(grad_fn._saved_*) as one backward pass: the region is recomputed once for them all and each saved tensor is
handed out once, so a second read raises. Built on a private copy of the reference."""

import torch

from reference_impl import *  # noqa: F403
from tests.mutants._support.reference_copy import private_reference

TARGET_CLAUSES = ["recompute.saved-tensor-read-outside-backward"]
BREAKS = "a saved tensor read outside backward cannot be read a second time"

_frame, _api = private_reference("saved_tensor_read_once")
_unpack_in_backward = _frame._Frame.unpack
_OUTSIDE = "outside backward"


def _unpack(self, slot):
    if torch._C._current_graph_task_id() != -1:
        return _unpack_in_backward(self, slot)
    if _OUTSIDE not in self.recomputed_in:
        self.recompute(_OUTSIDE)
        self.recomputed_in.add(_OUTSIDE)
    try:
        return slot.tensors.pop(_OUTSIDE)
    except KeyError:
        raise _frame.CheckpointError("this saved tensor was already read outside backward") from None


_frame._Frame.unpack = _unpack
CheckpointError = _frame.CheckpointError
checkpoint = _api.checkpoint
checkpoint_sequential = _api.checkpoint_sequential
