"""The reference's non-reentrant checkpoint with a determinism check over the floating-point saved tensors only:
indices, masks and complex intermediates are left out as "not what gradients flow through", so a recompute whose
saved index changes dtype, or whose mask changes shape, goes through unchecked. Built on a private copy of the
reference."""

from reference_impl import *  # noqa: F403
from tests.mutants._support.reference_copy import private_reference

TARGET_CLAUSES = ["determinism.default-detects"]
BREAKS = "the default determinism check skips saved tensors that are not floating point (indices, masks, complex)"

_frame, _api = private_reference("compares_only_floating")
_compared = _frame._metadata


def _metadata(tensor):
    return _compared(tensor) if tensor.is_floating_point() else None


_frame._metadata = _metadata
checkpoint, checkpoint_sequential, CheckpointError = _api.checkpoint, _api.checkpoint_sequential, _frame.CheckpointError
