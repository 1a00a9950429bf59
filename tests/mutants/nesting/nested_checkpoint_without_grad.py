"""Treats a checkpoint called inside another checkpoint's function as value-only (runs it under no_grad)."""

import torch

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from conformance.data.vocabulary import OWN_KEYWORDS

TARGET_CLAUSES = ["nesting.correct-gradients"]
BREAKS = "an inner checkpoint contributes no gradients"
UPSTREAM_TESTS = [
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_early_stop_False",
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_early_stop_True",
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_two_children_early_stop_False",
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_two_children_early_stop_True",
]

_depth = [0]


def _inside(call, function, *args, **kwargs):
    _depth[0] += 1
    try:
        return function(*args, **kwargs)
    finally:
        _depth[0] -= 1


def checkpoint(function, *args, **kwargs):
    if _depth[0]:
        with torch.no_grad():
            kwargs.pop("use_reentrant", None)
            for option in OWN_KEYWORDS:
                kwargs.pop(option, None)
            return function(*args, **kwargs)
    return _checkpoint(on_calls(function, _inside), *args, **kwargs)
