"""Non-reentrant checkpoint saves the region's tensor inputs (the only tensors it keeps from the forward)
with the caller's ambient saved_tensors_hooks suspended, instead of packing them through those hooks as
torch does (torch's own test_save_on_cpu_and_checkpoint relies on it). It shows with use_reentrant=False
inside an enclosing `torch.autograd.graph.saved_tensors_hooks(...)` or `save_on_cpu()`: a counting pack
hook sees no pack for the region's inputs (torch: one per tensor input), save_on_cpu leaves them on their
device, and value-transforming hooks (e.g. pack = quantize) no longer apply to them, so gradients differ
from torch's. Without ambient hooks, inside an outer checkpoint, and in the reentrant variant, saving is as
in torch.

Report: https://github.com/pytorch/pytorch/issues/147565 (pytorch/pytorch#147565)
"""

import contextlib

import torch
import torch._C._autograd as _hooks

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.frame_swap import Frame, checkpoint_with_frames

REPORT = "pytorch/pytorch#147565"
KIND = "saved-tensor-hooks"
BREAKS = "non-reentrant under ambient saved_tensors_hooks: the region's tensor inputs are saved without them"

_CHECKPOINT_HOOKS = ("_checkpoint_hook.", "_recomputation_hook.")  # an outer checkpoint's own hooks


@contextlib.contextmanager
def _ambient_hooks_suspended():
    """Pops the caller's saved_tensors_hooks (down to an enclosing checkpoint's own, if any) and pushes
    them back afterwards."""
    popped = []
    while (top := _hooks._top_saved_tensors_default_hooks(False)) is not None \
            and not top[0].__qualname__.startswith(_CHECKPOINT_HOOKS):
        popped.append(top)
        _hooks._pop_saved_tensors_default_hooks()
    try:
        yield
    finally:
        for pack, unpack in reversed(popped):
            _hooks._push_saved_tensors_default_hooks(pack, unpack)


class _Frame(Frame):
    def save_inputs(self, *args):
        with _ambient_hooks_suspended():  # the bug: the inputs bypass the caller's hooks
            super().save_inputs(*args)


checkpoint = checkpoint_with_frames(_Frame)


def witness(api):
    torch.manual_seed(0)
    w = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(2, 3, requires_grad=True)
    packed = []

    def pack(t):  # a lossy ambient hook: keeps one decimal
        packed.append(tuple(t.shape))
        return (t * 10).round() / 10

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = api.checkpoint(lambda t: (t @ w).sin(), x, use_reentrant=False)
        out.sum().backward()
    return tuple(packed), round(w.grad.sum().item(), 4), round(x.grad.sum().item(), 4)
