"""Stashes and restores the CPU RNG state only: dropout on a CUDA tensor argument draws a fresh mask
in the recompute, and the recompute advances the CUDA stream. Indistinguishable from torch on CPU."""

from tests.mutants._support.rng_around import as_is, checkpoint_with_rng, replaying
from tests.mutants._support.base import CheckpointError  # noqa: F401

TARGET_CLAUSES = ["rng.device-states"]
BREAKS = "the RNG state of the devices of the tensor arguments is neither replayed nor restored"

checkpoint, checkpoint_sequential = checkpoint_with_rng(as_is, replaying)
