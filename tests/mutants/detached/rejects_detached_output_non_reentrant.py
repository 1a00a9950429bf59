"""Non-reentrant, but copies the reentrant rule 'every output requires grad': an output that was
detached or computed under no_grad is marked as requiring grad, and backward into it raises."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["detached.non-reentrant-supported"]
BREAKS = "non-reentrant: a region whose output has no gradient fails at backward"
UPSTREAM_TESTS = [
    "test_autograd.py::TestAutograd::test_checkpointing_without_reentrant_detached_tensor_use_reentrant_False",
]


class _MarkedRequiresGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, output, *inputs):
        return output.view_as(output)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("none of the checkpoint's outputs requires grad")


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    out = _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    differentiable = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    if use_reentrant is False and torch.is_grad_enabled() and differentiable:
        outputs = out if isinstance(out, tuple) else (out,)
        if not any(isinstance(o, torch.Tensor) and o.requires_grad for o in outputs):
            marked = tuple(_MarkedRequiresGrad.apply(o, *differentiable) if isinstance(o, torch.Tensor) else o
                           for o in outputs)
            return marked if isinstance(out, tuple) else marked[0]
    return out
