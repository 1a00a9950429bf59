"""Reentrant, but without the check that the backward was started by backward() without inputs:
torch.autograd.grad and backward(inputs=...) run, and the inner backward of the recompute
accumulates gradients into every parameter of the region as a side effect."""

from tests.mutants._support.mini_reentrant import Switches, reentrant_beside_torch
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)

TARGET_CLAUSES = ["gradapi.reentrant-rejects-grad", "gradapi.reentrant-rejects-backward-inputs"]
BREAKS = "reentrant: autograd.grad and backward(inputs=...) do not raise (and leak .grad into parameters)"
UPSTREAM_TESTS = ["test_utils.py::TestCheckpoint::test_checkpoint_valid"]

checkpoint = reentrant_beside_torch(Switches(reject_grad_and_inputs=False))
