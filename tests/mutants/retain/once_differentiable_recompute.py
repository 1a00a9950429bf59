"""Computes the gradients of the region once-differentiably: no higher-order gradients."""

import torch
from torch.autograd.function import once_differentiable

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["retain.double-backward"]
BREAKS = "gradients flowing out of the region cannot be differentiated again (create_graph has no effect)"


class _OnceDifferentiable(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return t.view_as(t)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        return grad


def _inputs_once_differentiable(call, function, *args, **kwargs):
    args = tuple(_OnceDifferentiable.apply(a) if isinstance(a, torch.Tensor) and a.requires_grad else a for a in args)
    return function(*args, **kwargs)


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, _inputs_once_differentiable), *args, **kwargs)
