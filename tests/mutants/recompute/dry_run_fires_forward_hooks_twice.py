"""Runs the function once more, under no_grad, before the forward, to learn what it returns."""

import torch
import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["recompute.hooks-as-without-checkpoint"]
BREAKS = "a dry run of the function before the forward fires its modules' forward hooks twice in the forward"


def checkpoint(function, *args, **kwargs):
    # The dry run draws from a forked RNG and saves nothing: only the hooks it fires show.
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        function(*args, **{k: v for k, v in kwargs.items() if k not in _OWN})
    return _torch.checkpoint(function, *args, **kwargs)


_OWN = ("use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug", "early_stop")
