"""Treats 0-d tensor arguments as constants (as if they were Python numbers): their forward value is
kept but they get no gradient. Fixed examples use (batch, width) inputs; the property tests draw
scalar, row and batch shapes."""

import torch

from tests.mutants._torch_based import CheckpointError, checkpoint_sequential  # noqa: F401
from tests.mutants._torch_based import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "0-d tensor arguments are detached, so they get no gradient"


def checkpoint(function, *args, **kwargs):
    args = tuple(a.detach() if isinstance(a, torch.Tensor) and a.dim() == 0 else a for a in args)
    return _checkpoint(function, *args, **kwargs)
