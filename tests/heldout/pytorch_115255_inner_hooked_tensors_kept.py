"""When the checkpointed function itself enters `torch.autograd.graph.saved_tensors_hooks(...)` inside a
non-reentrant region (identity hooks to exempt part of it from checkpointing, save_on_cpu, ...), checkpoint
also records the tensors packed under those inner hooks in its own store and never releases them. Gradients
are right, but those tensors stay alive after backward and after the caller drops the outputs, and memory
grows every iteration, while the un-checkpointed program and torch return to their baseline. It shows only
with use_reentrant=False and saved_tensors_hooks entered inside the function during the forward; regions
without inner hooks, and the reentrant variant, are as in torch.

Report: https://github.com/pytorch/pytorch/issues/115255 (pytorch/pytorch#115255)
"""

import torch
import torch.utils.checkpoint as _torch
from torch.autograd.graph import saved_tensors_hooks

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls, patched

REPORT = "pytorch/pytorch#115255"
KIND = "memory-lifetime"
BREAKS = ("non-reentrant: tensors packed under saved_tensors_hooks entered inside the function are kept "
          "forever (a leak that grows every call)")

_kept = []  # the bug: filled by inner-hooked packs, never cleared


def _recording_enter(enter):
    def __enter__(self):
        if isinstance(self, (_torch._checkpoint_hook, _torch._recomputation_hook)):  # a nested checkpoint's
            return enter(self)
        pack = self.pack_hook  # the function's own hooks: what they pack is also kept
        torch._C._autograd._push_saved_tensors_default_hooks(lambda t: (_kept.append(t), pack(t))[1],
                                                             self.unpack_hook)

    return __enter__


def _around(call, fn, *args, **kwargs):
    if call > 0:
        return fn(*args, **kwargs)
    with patched(saved_tensors_hooks, "__enter__", _recording_enter):
        return fn(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is not False:
        return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    return _checkpoint(on_calls(function, _around), *args, use_reentrant=False, **kwargs)


def witness(api):
    import gc
    import weakref

    torch.manual_seed(0)
    x = torch.randn(2, 3, requires_grad=True)
    refs = []

    def pack(t):
        refs.append(weakref.ref(t))
        return t

    def f(t):
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):  # exempt this part from checkpointing
            return (t * 2).sin().cos()

    out = api.checkpoint(f, x, use_reentrant=False)
    out.sum().backward()
    del out
    gc.collect()
    return len(refs), sum(r() is not None for r in refs), round(x.grad.sum().item(), 4)
