"""checkpoint_sequential silently clamps segments into [1, len(functions)] instead of rejecting a
count that cannot split the functions."""

from tests.mutants._support.sequential_over import even_chunks, sequential_over
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint

TARGET_CLAUSES = ["sequential.bad-segments"]
BREAKS = "segments=0 or segments > len(functions) are clamped, not rejected"

checkpoint_sequential = sequential_over(checkpoint, chunks=lambda n, segments: even_chunks(n, min(max(segments, 1), n)))
