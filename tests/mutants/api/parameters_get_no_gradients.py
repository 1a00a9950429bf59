"""Reentrant, but its backward differentiates the recompute with respect to the region's inputs only
(autograd.grad(outputs, inputs) instead of an inner backward), so parameters and other tensors used
inside the region never get a gradient. Every test that compares parameter gradients under the
reentrant variant flags it, not only api.same-gradients'."""

from tests.mutants._support.mini_reentrant import Switches, reentrant_beside_torch
from conformance.adapters._support import sequential_over
from tests.mutants._support.base import CheckpointError  # noqa: F401

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "reentrant: closed-over parameters and tensors used inside the region get no gradient"
UPSTREAM_TESTS = ["test_utils.py::TestCheckpoint::test_checkpoint_module_list"]

checkpoint = reentrant_beside_torch(Switches(accumulate_into_parameters=False))
checkpoint_sequential = sequential_over(checkpoint)
