"""Keeps detached copies of the tensor arguments for the recompute, as the reentrant variant does: the
forward runs on the caller's tensors, every recompute on ``t.detach()`` copies of them (same values, same
requires_grad). Values and gradients are right; what changes is identity, so a custom autograd.Function
inside the region that saved an argument gets another tensor object back in backward (the scenario of
torch's test_checkpointing_without_reentrant_saved_object_identity)."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

TARGET_CLAUSES = ["inputs.non-reentrant-recompute-gets-the-passed-tensors"]
BREAKS = "the recompute is called with detached copies of the tensor arguments, not the caller's tensors"


def _copy(value):
    return value.detach().requires_grad_(value.requires_grad) if isinstance(value, torch.Tensor) else value


def _recompute_on_copies(call, function, *args, **kwargs):
    if call > 0:
        args = tuple(_copy(a) for a in args)
    return function(*args, **kwargs)


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, _recompute_on_copies), *args, **kwargs)
