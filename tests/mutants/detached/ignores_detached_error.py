"""Reentrant, but when no recomputed output requires grad (the region's output was detached or made
under no_grad) its backward silently returns no gradients instead of raising."""

from tests.mutants._support.mini_reentrant import Switches, reentrant_beside_torch
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)

TARGET_CLAUSES = ["detached.reentrant-error"]
BREAKS = "reentrant: backward through a region whose output has no gradient does not raise"
UPSTREAM_TESTS = [
    "test_utils.py::TestCheckpoint::test_checkpoint_partial_grad",
    "test_autograd.py::TestAutograd::test_checkpointing_without_reentrant_detached_tensor_use_reentrant_True",
]

checkpoint = reentrant_beside_torch(Switches(raise_without_differentiable_output=False))
