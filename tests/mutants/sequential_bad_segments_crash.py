"""checkpoint_sequential indexes past the functions for segments > len(functions) and crashes with an
IndexError (not a rejection of the count); segments=0 divides by zero."""

from tests.mutants._sequential_over import even_chunks, sequential_over
from tests.mutants._torch_based import CheckpointError, checkpoint  # noqa: F401

TARGET_CLAUSES = ["sequential.bad-segments"]
BREAKS = "segments > len(functions) raises IndexError"


def _chunks(n, segments):
    if segments > n:
        raise IndexError("list index out of range")
    return even_chunks(n, segments)


checkpoint_sequential = sequential_over(checkpoint, chunks=_chunks)
