"""The recomputed region serves one backward: a later backward through the retained graph gets no gradient from
it, as an implementation that frees its recomputed activations after the first use and answers zeros after."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["retain.repeated-backward"]
BREAKS = "a second backward with retain_graph=True gets zero gradients from the region"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_access_saved_tensor_twice_without_recomputation_works"]


class _FirstBackwardOnly(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.served = False
        return t.view_as(t)

    @staticmethod
    def backward(ctx, grad):
        served, ctx.served = ctx.served, True
        return torch.zeros_like(grad) if served else grad


def checkpoint(function, *args, **kwargs):
    out = _checkpoint(function, *args, **kwargs)
    return _FirstBackwardOnly.apply(out) if isinstance(out, torch.Tensor) and out.requires_grad else out
