"""checkpoint_sequential indexes past the functions for segments > len(functions) and crashes with an
IndexError (not a rejection of the count); segments=0 divides by zero."""

from tests.mutants._support.sequential_over import even_chunks, sequential_over
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint

TARGET_CLAUSES = ["sequential.bad-segments"]
BREAKS = "segments > len(functions) raises IndexError"


def _chunks(n, segments):
    if segments > n:
        raise IndexError("list index out of range")
    return even_chunks(n, segments)


checkpoint_sequential = sequential_over(checkpoint, chunks=_chunks)
