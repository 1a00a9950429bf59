"""checkpoint_sequential with segments == len(functions) checkpoints the last function too (an
off-by-one that shows only at one segment per function)."""

from tests.mutants._sequential_over import even_chunks, sequential_over
from tests.mutants._torch_based import CheckpointError, checkpoint  # noqa: F401

TARGET_CLAUSES = ["sequential.segments"]
BREAKS = "with one function per segment the last function is re-run in backward"


def _chunks(n, segments):
    return even_chunks(n, segments) + ([(n - 1, n)] if segments == n else [])


checkpoint_sequential = sequential_over(checkpoint, chunks=_chunks)
