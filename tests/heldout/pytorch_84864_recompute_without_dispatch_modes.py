"""The non-reentrant recompute runs with the Python dispatch-mode stack cleared (as under
`torch.utils._python_dispatch._disable_current_modes()`, a tempting way to hide the "duplicate" recomputed
ops from user modes), so a TorchDispatchMode the caller keeps active around both forward and backward is
applied to the forward but not to the recompute. Checkpoint's own modes (selective checkpointing's cache,
debug logging), entered for the recompute itself, still apply. It shows with use_reentrant=False and a
dispatch mode active at backward: a counting mode sees none of the recomputed ops, and a mode that changes
results (constant noise instead of rand, a cast) gives a recompute that differs from the forward, hence
silently wrong gradients (or CheckpointError on a dtype/shape change). Without a caller's mode, and in the
reentrant variant, it is torch's checkpoint.

Report: https://github.com/pytorch/pytorch/issues/84864 (pytorch/pytorch#84864)
"""

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.frame_swap import Frame, checkpoint_with_frames

REPORT = "pytorch/pytorch#84864"
KIND = "tensor-subclass"
BREAKS = "non-reentrant: the caller's TorchDispatchModes are not applied in the recompute"


class _Frame(Frame):
    def __init__(self, recompute_fn, *args, **kwargs):
        def without_modes(*inputs):
            with _disable_current_modes():  # the bug: the caller's modes, popped for the recompute
                return recompute_fn(*inputs)  # (which enters checkpoint's own recompute modes again)

        super().__init__(without_modes, *args, **kwargs)


checkpoint = checkpoint_with_frames(_Frame)


def witness(api):
    class HalfScale(TorchDispatchMode):  # a mode that changes results: every mm is scaled by 0.5
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out * 0.5 if func is torch.ops.aten.mm.default else out

    torch.manual_seed(0)
    w = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(2, 3, requires_grad=True)
    with HalfScale():
        out = api.checkpoint(lambda t: (t @ w).sin(), x, use_reentrant=False)
        out.sum().backward()
    return round(out.sum().item(), 4), round(w.grad.sum().item(), 4), round(x.grad.sum().item(), 4)
