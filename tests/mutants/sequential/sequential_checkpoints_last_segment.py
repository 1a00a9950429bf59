"""checkpoint_sequential checkpoints every segment, the last one included, so backward re-runs
the last segment too (same values and gradients, one more recompute)."""

from tests.mutants._support.sequential_over import even_chunks, sequential_over
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint

TARGET_CLAUSES = ["sequential.segments"]
BREAKS = "the last segment is checkpointed and re-run in backward"
UPSTREAM_TESTS = ["test_utils.py::TestCheckpoint::test_checkpoint_trigger"]


def _all_chunks(n, segments):
    chunks = even_chunks(n, segments)
    return chunks + [(chunks[-1][1] if chunks else 0, n)]


checkpoint_sequential = sequential_over(checkpoint, chunks=_all_chunks)
