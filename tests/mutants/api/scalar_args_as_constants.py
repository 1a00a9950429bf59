"""Treats 0-d tensor arguments as constants (as if they were Python numbers): their forward value is
kept but they get no gradient. The 0-d case of the "degenerate shape" tests flags it, and so do the
property tests, which draw scalar, row and batch shapes."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "0-d tensor arguments are detached, so they get no gradient"


def checkpoint(function, *args, **kwargs):
    args = tuple(a.detach() if isinstance(a, torch.Tensor) and a.dim() == 0 else a for a in args)
    return _checkpoint(function, *args, **kwargs)
