"""checkpoint_sequential silently clamps segments into [1, len(functions)] instead of rejecting a
count that cannot split the functions."""

from tests.mutants._sequential_over import even_chunks, sequential_over
from tests.mutants._torch_based import CheckpointError, checkpoint  # noqa: F401

TARGET_CLAUSES = ["sequential.bad-segments"]
BREAKS = "segments=0 or segments > len(functions) are clamped, not rejected"

checkpoint_sequential = sequential_over(checkpoint, chunks=lambda n, segments: even_chunks(n, min(max(segments, 1), n)))
