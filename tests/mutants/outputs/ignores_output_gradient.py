"""Backpropagates ones through the recompute instead of the gradient the outputs received."""

import torch

from tests.mutants._support.call_wrappers import map_tensors, on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["outputs.gradient-argument"]
BREAKS = "the incoming output gradient is replaced by ones (as if backward() had no gradient argument)"


class _OnesInsteadOfGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return t.clone()

    @staticmethod
    def backward(ctx, grad):
        return torch.ones_like(grad)


def _ones_gradient(call, function, *args, **kwargs):
    return map_tensors(function(*args, **kwargs), _OnesInsteadOfGradient.apply)


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, _ones_gradient), *args, **kwargs)
