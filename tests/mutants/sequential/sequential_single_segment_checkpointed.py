"""checkpoint_sequential with segments=1 checkpoints every function but the last (segments read as
'at least two')."""

from tests.mutants._support.sequential_over import even_chunks, sequential_over
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint

TARGET_CLAUSES = ["sequential.segments"]
BREAKS = "segments=1 re-runs the leading functions in backward; one segment is the last, never re-run"
UPSTREAM_TESTS = ["test_utils.py::TestCheckpoint::test_checkpoint_sequential_deprecated_multiple_args"]


def _chunks(n, segments):
    return [(0, n - 1)] if segments == 1 else even_chunks(n, segments)


checkpoint_sequential = sequential_over(checkpoint, chunks=_chunks)
