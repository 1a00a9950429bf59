"""The recompute runs inside a fresh `contextvars.Context()` instead of the context of the thread running
backward (as if it were run on a helper thread), so every ContextVar the caller set reads its default there.
In the report, a dynamo config override held in a ContextVar (recompile_limit) was lost in the recompute.
It shows when the checkpointed function reads a ContextVar (a scale, a config flag) that the caller set
around both forward and backward: the forward sees the caller's value, the recompute the default, so the
gradients are silently wrong (or CheckpointError when the variable changes shapes or dtypes). Both variants;
functions that read no ContextVar, and forwards, are as in torch.

Report: https://github.com/pytorch/pytorch/issues/186537 (pytorch/pytorch#186537),
https://github.com/pytorch/pytorch/pull/186583
"""

import contextvars

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

REPORT = "pytorch/pytorch#186537"
KIND = "backward-other-thread"
BREAKS = "the recompute runs in a fresh contextvars.Context: ContextVars set by the caller read their defaults"


def _around(call, fn, *args, **kwargs):
    if call == 0:
        return fn(*args, **kwargs)
    return contextvars.Context().run(fn, *args, **kwargs)  # the bug: not the caller's context


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    return _checkpoint(on_calls(function, _around), *args, use_reentrant=use_reentrant, **kwargs)


_scale = contextvars.ContextVar("heldout_186537_scale", default=1.0)


def witness(api):
    results = []
    for use_reentrant in (True, False):
        torch.manual_seed(0)
        w = torch.randn(3, 3, requires_grad=True)
        x = torch.randn(2, 3, requires_grad=True)
        token = _scale.set(3.0)  # around forward and backward
        try:
            out = api.checkpoint(lambda t: (t @ w * _scale.get()).sin(), x, use_reentrant=use_reentrant)
            out.sum().backward()
        finally:
            _scale.reset(token)
        results.append((round(w.grad.sum().item(), 4), round(x.grad.sum().item(), 4)))
    return tuple(results)
