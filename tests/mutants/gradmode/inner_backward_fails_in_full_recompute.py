"""Non-reentrant: with early_stop=False, a backward inside the function fails when the recompute re-runs it."""

import functools

import torch
import torch.utils.checkpoint as _torch

from tests.mutants._support.call_wrappers import on_calls, patched, rejecting, recomputes_under
from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["gradmode.inner-backward-full-recompute"]
BREAKS = "with early_stop=False the recompute rejects torch.autograd.grad inside the function"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_checkpointing_without_reentrant_parameter_used_in_an_out"]

_no_backward_inside = functools.partial(patched, torch.autograd, "grad", rejecting(
    "backward inside a checkpointed region is not supported during its recompute"))


def checkpoint(function, *args, use_reentrant=None, early_stop=True, **kwargs):
    if use_reentrant or early_stop:
        return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, early_stop=early_stop, **kwargs)
    function = on_calls(function, recomputes_under(_no_backward_inside))
    return _torch.checkpoint(function, *args, use_reentrant=False, early_stop=False, **kwargs)
