"""Reentrant, but without the check that the backward was started by backward() without inputs:
torch.autograd.grad and backward(inputs=...) run, and the inner backward of the recompute
accumulates gradients into every parameter of the region as a side effect."""

from tests.mutants._support.mini_reentrant import Switches, reentrant_checkpoint
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["gradapi.reentrant-rejects-grad", "gradapi.reentrant-rejects-backward-inputs"]
BREAKS = "reentrant: autograd.grad and backward(inputs=...) do not raise (and leak .grad into parameters)"

_unchecked = reentrant_checkpoint(Switches(reject_grad_and_inputs=False))


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant:
        return _unchecked(function, *args, **kwargs)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
