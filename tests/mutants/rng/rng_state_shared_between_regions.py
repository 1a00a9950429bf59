"""Keeps one RNG stash for the whole program (like the 1.0-era global flag) instead of one per
checkpoint: with two or more regions, every recompute replays the last region's state."""

from tests.mutants._support.rng_around import as_is, checkpoint_with_rng, replaying
from tests.mutants._support.base import CheckpointError  # noqa: F401

TARGET_CLAUSES = ["rng.same-gradients", "rng.draws-between-passes"]
BREAKS = "the RNG state is stashed in one global slot, so stacked regions recompute with the last region's masks"

_last_stash = []


def _forward(stash):
    _last_stash[:] = [stash]
    return as_is(stash)


def _recompute(stash):
    return replaying(_last_stash[0])


checkpoint, checkpoint_sequential = checkpoint_with_rng(_forward, _recompute)
