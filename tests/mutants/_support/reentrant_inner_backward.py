"""torch's reentrant checkpoint with the inner backward of its recompute replaced: the base of mutants
that change only what data-parallel wrappers see of that backward (the parameters' gradient-accumulation
hooks, through which DDP and FSDP learn that a gradient is ready), not the gradients themselves."""

import contextlib

import torch
import torch.utils.checkpoint as torch_checkpoint

from conformance.adapters._support import sequential_over
from tests.mutants._support.base import checkpoint as _checkpoint

torch_backward = torch.autograd.backward  # the real one, for the replacements to call


@contextlib.contextmanager
def _swapped(owner, name, value):
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)


def with_inner_backward(inner_backward):
    """(checkpoint, checkpoint_sequential): torch's, except that the reentrant recompute's gradients are
    propagated by inner_backward(tensors, grad_tensors, ...) instead of torch.autograd.backward."""

    class _CheckpointFunction(torch_checkpoint.CheckpointFunction):
        @staticmethod
        def backward(ctx, *grads):
            with _swapped(torch.autograd, "backward", inner_backward):
                return torch_checkpoint.CheckpointFunction.backward(ctx, *grads)

    def checkpoint(function, *args, use_reentrant=None, **kwargs):
        if use_reentrant is False:
            return _checkpoint(function, *args, use_reentrant=False, **kwargs)
        with _swapped(torch_checkpoint, "CheckpointFunction", _CheckpointFunction):
            return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)

    return checkpoint, sequential_over(checkpoint)
