"""When the checkpointed function raises during the non-reentrant forward, context_fn's forward context
manager is not unwound with that exception: the generator holding it is left suspended (the pre-fix code
never resumed it), so the manager is only exited when that generator is garbage-collected, after the caller
has handled the exception, and its __exit__ then receives GeneratorExit instead of the function's exception.
Cleanup done in __exit__ (ContextVar resets, flags, pushed modes) has therefore not run inside the caller's
`except` block, and a manager that would suppress the exception is never asked. It shows only with
use_reentrant=False, a context_fn, and a function that raises in the forward; the exception itself reaches
the caller unchanged, and checkpoint's own saved-tensor hooks are removed as in torch. Forwards that return
are as in torch.

Report: https://github.com/pytorch/pytorch/pull/184018 (pytorch/pytorch#184018)
"""

import torch
import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

REPORT = "pytorch/pytorch#184018"
KIND = "context-fn"
BREAKS = ("non-reentrant, function raising in forward: context_fn's forward manager is not exited with the "
          "exception (left to garbage collection, which exits it with GeneratorExit)")


def _held(manager):
    with manager:
        yield


class _ForwardManager:
    """The forward manager, entered inside a generator that is resumed only when the forward succeeds."""

    def __init__(self, manager):
        self.gen = _held(manager)

    def __enter__(self):
        next(self.gen)

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            next(self.gen, None)
        return False  # the bug: on an exception, self.gen is left suspended (closed when collected)


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    context_fn = kwargs.get("context_fn", _torch.noop_context_fn)
    if use_reentrant is False and context_fn is not _torch.noop_context_fn:
        def abandoning_context_fn():
            forward, recompute = context_fn()
            return _ForwardManager(forward), recompute

        kwargs["context_fn"] = abandoning_context_fn
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


def witness(api):
    import contextlib
    import gc

    events = []

    class Forward:
        def __enter__(self):
            events.append("enter")

        def __exit__(self, exc_type, exc, tb):
            events.append(f"exit:{exc_type.__name__ if exc_type else None}")

    def fail(t):
        raise ValueError("boom")

    x = torch.ones(2, requires_grad=True)
    in_except = None
    try:
        api.checkpoint(fail, x, use_reentrant=False, context_fn=lambda: (Forward(), contextlib.nullcontext()))
    except ValueError:
        in_except = tuple(events)
    gc.collect()
    return in_except, tuple(events)
