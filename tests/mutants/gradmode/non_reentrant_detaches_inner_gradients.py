"""Non-reentrant: gradients computed by torch.autograd.grad inside the checkpointed function come back
detached, as constants, even with create_graph=True."""

import functools

import torch

from tests.mutants._support.call_wrappers import every_call_under, on_calls, patched
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["gradmode.non-reentrant-records-graph"]
BREAKS = ("a gradient taken with create_graph=True inside the non-reentrant region is detached, so the outer "
          "backward misses its second-order term (a gradient penalty gets wrong gradients)")


def _detaching(grad):
    def detached(*args, **kwargs):
        return tuple(g if g is None else g.detach() for g in grad(*args, **kwargs))

    return detached


_detached_grad = functools.partial(patched, torch.autograd, "grad", _detaching)


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False:
        function = on_calls(function, every_call_under(_detached_grad))
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
