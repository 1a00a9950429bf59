"""checkpoint_sequential has no preserve_rng_state keyword (its signature stops at use_reentrant)."""

from tests.mutants._torch_based import CheckpointError, checkpoint  # noqa: F401
from tests.mutants._torch_based import checkpoint_sequential as _checkpoint_sequential

TARGET_CLAUSES = ["api.keywords", "rng.no-preserve"]
BREAKS = "checkpoint_sequential(..., preserve_rng_state=...) raises TypeError"


def checkpoint_sequential(functions, segments, input, use_reentrant=None):
    return _checkpoint_sequential(functions, segments, input, use_reentrant=use_reentrant)
