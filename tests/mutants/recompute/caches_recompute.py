"""A hand-written checkpoint that keeps the recomputed graph for later backwards."""

import torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["recompute.each-backward"]
BREAKS = "recomputes in the first backward only and keeps those activations for any retain_graph backward"


class CachingCheckpoint(torch.autograd.Function):
    """Reentrant-style checkpoint of a function of tensors returning a tensor or a tuple of tensors.
    reuse() says whether a later backward may reuse the first backward's recompute (the bug)."""

    @staticmethod
    def forward(ctx, function, reuse, *args):
        ctx.function, ctx.reuse, ctx.recomputed = function, reuse, None
        ctx.save_for_backward(*args)
        with torch.no_grad():
            return function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        if ctx.recomputed is None or not ctx.reuse():
            inputs = [t.detach().requires_grad_(t.requires_grad) for t in ctx.saved_tensors]
            with torch.enable_grad():
                outputs = ctx.function(*inputs)
            ctx.recomputed = inputs, outputs if isinstance(outputs, tuple) else (outputs,)
        inputs, outputs = ctx.recomputed
        wanted = [t for t in inputs if t.requires_grad]
        grads = iter(torch.autograd.grad(outputs, wanted, grad_outputs, retain_graph=True))
        return (None, None, *[next(grads) if t.requires_grad else None for t in inputs])


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    """Functions of tensor arguments only: enough to show the bug."""
    return CachingCheckpoint.apply(function, lambda: True, *args)
