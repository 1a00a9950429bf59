"""Non-reentrant: a full recompute (early stop off) may save more tensors than the forward did."""

from tests.mutants._support.frame_swap import Frame, checkpoint_with_frames
from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["determinism.more-saved-detected"]
BREAKS = "with early stop off, tensors the recompute saves beyond the forward's are silently ignored"


class _ForgivingFrame(Frame):
    # torch ignores extra saves while the forward is still running (a backward inside the region);
    # a frame whose forward never counts as completed ignores them in backward's recompute too.
    @property
    def forward_completed(self):
        return False

    @forward_completed.setter
    def forward_completed(self, value):
        pass


checkpoint = checkpoint_with_frames(_ForgivingFrame)
