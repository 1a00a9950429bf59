"""Stashes nothing: the recompute draws from the RNG state found at backward time (in a forked RNG,
so the caller's stream is kept), hence different dropout masks from the forward's."""

import torch

from tests.mutants._support.rng_around import as_is, checkpoint_with_rng
from tests.mutants._support.base import CheckpointError  # noqa: F401

TARGET_CLAUSES = ["rng.same-gradients", "rng.draws-between-passes"]
BREAKS = "the recompute draws from the backward-time RNG state instead of the forward's"


def _forked(stash):
    return torch.random.fork_rng(devices=[])


checkpoint, checkpoint_sequential = checkpoint_with_rng(as_is, _forked)
