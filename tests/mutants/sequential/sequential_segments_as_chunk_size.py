"""checkpoint_sequential reads segments as the number of functions per chunk, not the number of
chunks (values and gradients stay right; the split is different)."""

from tests.mutants._support.sequential_over import sequential_over
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint

TARGET_CLAUSES = ["sequential.segments"]
BREAKS = "segments is taken as the chunk size: n // segments chunks of `segments` functions"


def _chunks_of_size(n, size):
    if not 0 < size <= n:
        raise ValueError(f"a chunk size of {size} cannot split {n} functions")
    starts = range(0, n - size, size)  # every full chunk but the last runs checkpointed
    return [(start, start + size) for start in starts]


checkpoint_sequential = sequential_over(checkpoint, chunks=_chunks_of_size)
