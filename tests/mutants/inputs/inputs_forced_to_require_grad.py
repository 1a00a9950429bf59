"""Makes floating-point leaf inputs require grad, to get around the reentrant variant's requirement."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["inputs.unchanged"]
BREAKS = "the caller's input tensors are switched to requires_grad=True"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_checkpointing_without_reentrant_saved_object_identity"]


def checkpoint(function, *args, **kwargs):
    for a in args:
        if isinstance(a, torch.Tensor) and a.is_floating_point() and a.is_leaf and not a.requires_grad:
            a.requires_grad_(True)
    return _checkpoint(function, *args, **kwargs)
