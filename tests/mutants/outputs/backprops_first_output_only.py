"""Differentiates only the first output of the function: later outputs carry no gradient."""

import torch

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["outputs.backward-through-one"]
BREAKS = "outputs after the first are detached, so backward through them alone gives no gradients"
UPSTREAM_TESTS = [
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_reentrant_backwards_early_stop_False",
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_reentrant_backwards_early_stop_True",
]


def _first_output_only(call, function, *args, **kwargs):
    out = function(*args, **kwargs)
    if isinstance(out, tuple):
        return (out[0], *(o.detach() if isinstance(o, torch.Tensor) else o for o in out[1:]))
    return out


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, _first_output_only), *args, **kwargs)
