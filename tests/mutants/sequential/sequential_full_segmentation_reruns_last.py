"""checkpoint_sequential with segments == len(functions) checkpoints the last function too (an
off-by-one that shows only at one segment per function)."""

from tests.mutants._support.sequential_over import even_chunks, sequential_over
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint

TARGET_CLAUSES = ["sequential.segments"]
BREAKS = "with one function per segment the last function is re-run in backward"


def _chunks(n, segments):
    return even_chunks(n, segments) + ([(n - 1, n)] if segments == n else [])


checkpoint_sequential = sequential_over(checkpoint, chunks=_chunks)
