"""Non-reentrant: when no input requires grad, the RNG state is not stashed (a shortcut that assumes
nothing will need a backward), so dropout inside gives the parameters wrong gradients."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["reqgrad.non-reentrant-gradients"]
BREAKS = "with frozen inputs the recompute draws fresh dropout masks"


def checkpoint(function, *args, **kwargs):
    if not any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
        kwargs["preserve_rng_state"] = False
    return _checkpoint(function, *args, **kwargs)
