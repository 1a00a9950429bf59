"""Makes the region reproducible the hand-written way: forward and recompute both run from a fixed
seed in a forked RNG, so the recompute matches the forward but neither matches the un-checkpointed run."""

import contextlib

import torch

from tests.mutants._support.rng_around import checkpoint_with_rng
from tests.mutants._support.base import CheckpointError  # noqa: F401

TARGET_CLAUSES = ["rng.same-forward", "rng.same-gradients", "rng.draws-between-passes", "rng.stream-restored"]
BREAKS = "dropout masks come from a private fixed seed, not from the caller's RNG stream"

SEED = 42


@contextlib.contextmanager
def _seeded(stash):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        yield


checkpoint, checkpoint_sequential = checkpoint_with_rng(_seeded, _seeded)
