"""context_fn is called once per checkpoint call and its recompute manager entered for the first recompute only: a
retained graph's second backward (or a backward of another part of the region after the first) recomputes outside
it. A manager made for one use (a generator-based one, which cannot be entered twice) is the reason an
implementation would guard it so; the docs say the recomputation runs under the second manager, every time. Forward
and first recompute are torch's."""

import contextlib

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["contextfn.forward-and-recompute"]
BREAKS = "only the first recompute runs under context_fn's recompute manager"
UPSTREAM_TESTS = ["test_autograd.py::TestSelectiveActivationCheckpoint::test_can_only_trigger_recompute_once"]


class _FirstTimeOnly:
    def __init__(self, manager):
        self.manager, self.uses, self.entered = manager, 0, False

    def __enter__(self):
        self.uses += 1
        self.entered = self.uses == 1
        return self.manager.__enter__() if self.entered else None

    def __exit__(self, *exc):
        return self.manager.__exit__(*exc) if self.entered else False


def checkpoint(function, *args, use_reentrant=None, context_fn=_torch.noop_context_fn, **kwargs):
    made = []

    def once():
        if not made:
            forward, recompute = context_fn()
            made[:] = [forward, _FirstTimeOnly(recompute)]
        return made[0], made[1] if len(made) > 1 else contextlib.nullcontext()

    if context_fn is _torch.noop_context_fn:
        return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, context_fn=once, **kwargs)
