"""Replays the forward's RNG state for the recompute but never gives the caller's state back: after
backward the global stream is where the recompute left it."""

import contextlib

import torch

from tests.mutants._support.rng_around import as_is, checkpoint_with_rng
from tests.mutants._support.base import CheckpointError  # noqa: F401

TARGET_CLAUSES = ["rng.stream-restored"]
BREAKS = "the recompute sets the stashed RNG state without restoring the caller's state afterwards"


@contextlib.contextmanager
def _set_only(stash):
    torch.set_rng_state(stash)
    yield


checkpoint, checkpoint_sequential = checkpoint_with_rng(as_is, _set_only)
