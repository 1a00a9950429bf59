"""Non-reentrant: Tensor.backward (torch.autograd.backward) inside the checkpointed function raises;
torch.autograd.grad inside it still works."""

import functools

import torch

from tests.mutants._support.call_wrappers import every_call_under, on_calls, patched, rejecting
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["gradmode.non-reentrant-records-graph"]
BREAKS = "the non-reentrant variant rejects Tensor.backward called inside the checkpointed function"

_no_backward = functools.partial(patched, torch.autograd, "backward", rejecting(
    "backward() inside a checkpointed region is not supported; use torch.autograd.grad"))


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False:
        function = on_calls(function, every_call_under(_no_backward))
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
