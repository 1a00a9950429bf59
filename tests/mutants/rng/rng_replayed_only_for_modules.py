"""The RNG state is replayed only when the function is an nn.Module (a checkpoint that looks for
Dropout layers to decide whether to stash the RNG state): random draws in plain functions differ."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["rng.same-gradients"]
BREAKS = "rand_like, bernoulli or dropout in a plain function are drawn afresh in the recompute"


def checkpoint(function, *args, **kwargs):
    if not isinstance(function, torch.nn.Module):
        kwargs["preserve_rng_state"] = False
    return _checkpoint(function, *args, **kwargs)
