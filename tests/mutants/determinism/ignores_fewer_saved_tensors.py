"""Non-reentrant: no count check; a recompute that saves fewer tensors fails with an internal error."""

from tests.mutants._support.frame_swap import Frame, checkpoint_with_frames
from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["determinism.fewer-saved-detected"]
BREAKS = "a recompute that saves fewer tensors than the forward is not reported as a CheckpointError"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_checkpoint_detects_non_determinism"]


class _UncountedFrame(Frame):
    def check_recomputed_tensors_match(self, gid):
        if self.recomp_counter[gid] < len(self.weak_holders):
            return  # the missing tensor is then looked up anyway: an AssertionError, not a CheckpointError
        super().check_recomputed_tensors_match(gid)


checkpoint = checkpoint_with_frames(_UncountedFrame)
