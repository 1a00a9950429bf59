"""Never returns from the backward of a non-reentrant checkpoint: its output passes through an
autograd.Function whose backward sleeps forever. Forward passes, and the reentrant variant, are torch's."""

import time

import torch
import torch.utils.checkpoint
from torch.utils.checkpoint import CheckpointError, checkpoint_sequential  # noqa: F401
from torch.utils.checkpoint import checkpoint as _checkpoint


class _StuckBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor):
        return tensor.view_as(tensor)

    @staticmethod
    def backward(ctx, grad):
        while True:  # sleeping releases the GIL, like a C++ kernel that waits forever
            time.sleep(1)


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    out = _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    if use_reentrant is False and isinstance(out, torch.Tensor) and out.requires_grad:
        return _StuckBackward.apply(out)
    return out


def __getattr__(name):  # the rest of the API (early stop, debug, SAC, ...) is torch's, unchanged
    return getattr(torch.utils.checkpoint, name)
