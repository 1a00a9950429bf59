"""Reentrant checkpoint marks the thread as "inside a recompute, checkpoint not valid" before re-running the
function in backward and clears the mark only when the recompute succeeds (the restore is not in a
`finally`). After a recompute that raises (e.g. a function that fails on its second call), the exception
reaches the caller as in torch, but the mark stays set: every later backward through any reentrant
checkpoint on that thread is refused with "When use_reentrant=True, torch.utils.checkpoint is incompatible
with .grad() or passing an `inputs` parameter to .backward()", while torch (and the un-checkpointed program)
keeps working. Before any failed recompute, and in the non-reentrant variant, it is torch's checkpoint.

Report: https://github.com/pytorch/pytorch/issues/37874 (pytorch/pytorch#37874)
"""

import threading

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

REPORT = "pytorch/pytorch#37874"
KIND = "exceptions-leftover-state"
BREAKS = "reentrant: after a recompute that raised, every later reentrant backward is refused as if under .grad()"

_TorchFunction = _torch.CheckpointFunction
_thread = threading.local()  # .recomputing: set around each recompute, reset on success only


class _CheckpointFunction(_TorchFunction):
    @staticmethod
    def backward(ctx, *grads):
        if getattr(_thread, "recomputing", False):
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible"
                " with .grad() or passing an `inputs` parameter to .backward()."
                " To resolve this error, you can either set use_reentrant=False,"
                " or call .backward() without passing the `inputs` argument."
            )
        return _TorchFunction.backward(ctx, *grads)


def _around(call, fn, *args, **kwargs):
    if call == 0:
        return fn(*args, **kwargs)
    _thread.recomputing = True
    out = fn(*args, **kwargs)  # the bug: no try/finally, an exception leaves the flag set
    _thread.recomputing = False
    return out


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False:
        return _checkpoint(function, *args, use_reentrant=False, **kwargs)
    _torch.CheckpointFunction = _CheckpointFunction  # torch's checkpoint looks the class up at call time
    try:
        return _checkpoint(on_calls(function, _around), *args, use_reentrant=use_reentrant, **kwargs)
    finally:
        _torch.CheckpointFunction = _TorchFunction


def witness(api):
    import torch

    torch.manual_seed(0)
    w = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(2, 3, requires_grad=True)
    calls, seen = [], []

    def fails_when_recomputed(t):
        calls.append(1)
        if len(calls) > 1:
            raise ValueError("recompute failed")
        return (t @ w).sin()

    def run():
        for f in (fails_when_recomputed, lambda t: (t @ w).tanh()):
            try:
                api.checkpoint(f, x, use_reentrant=True).sum().backward()
                seen.append(round(w.grad.sum().item(), 4))
            except Exception as e:  # noqa: BLE001
                seen.append(type(e).__name__)

    worker = threading.Thread(target=run)  # a thread of its own: whatever state is left stays with it
    worker.start()
    worker.join()
    return tuple(seen)
