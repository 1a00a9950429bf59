"""Keeps each call's RNG stash in the thread that ran its forward (a threading.local, for "thread safety"): a
recompute in that thread replays it, a recompute in another thread, as autograd's device threads run a backward,
finds none and replays nothing, so its dropout masks are new ones. The opposite of one stash for every thread
(densenet's #36)."""

import threading

import torch

from tests.mutants._support.rng_around import as_is, checkpoint_with_rng, replaying
from tests.mutants._support.base import CheckpointError  # noqa: F401

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "the RNG stash is kept per thread: a recompute in another thread than the forward's draws new masks"

_local = threading.local()  # .stashes: the stashes of the forwards this thread ran


def _forward(stash):
    _local.__dict__.setdefault("stashes", []).append(stash)
    return as_is(stash)


def _recompute(stash):
    mine = any(s is stash for s in _local.__dict__.get("stashes", ()))
    return replaying(stash if mine else torch.get_rng_state())


checkpoint, checkpoint_sequential = checkpoint_with_rng(_forward, _recompute)
