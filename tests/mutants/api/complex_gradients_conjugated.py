"""Gives complex arguments the conjugate of their gradient, as a hand-written backward that takes the
derivative with respect to z instead of PyTorch's convention (the conjugate Wirtinger derivative) would.
Real arguments are untouched; complex values are right, their gradients are not."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "complex arguments get the conjugate of their gradient"


class _ConjugateGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        return z.view_as(z)

    @staticmethod
    def backward(ctx, grad):
        return grad.conj()


def checkpoint(function, *args, **kwargs):
    args = tuple(_ConjugateGradient.apply(a) if isinstance(a, torch.Tensor) and a.is_complex() and a.requires_grad
                 else a for a in args)
    return _checkpoint(function, *args, **kwargs)
