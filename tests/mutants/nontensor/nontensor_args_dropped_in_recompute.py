"""Stashes only the tensor arguments: the recompute gets None for every non-tensor argument."""

import torch

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["nontensor.arguments-pass-through"]
BREAKS = "non-tensor positional arguments are replaced by None in the recompute"
UPSTREAM_TESTS = [
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_non_tensor_inputs_and_outputs_early_stop_False",
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_non_tensor_inputs_and_outputs_early_stop_True",
]


def _tensors_only(call, function, *args, **kwargs):
    if call > 0:
        args = tuple(a if isinstance(a, torch.Tensor) else None for a in args)
    return function(*args, **kwargs)


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, _tensors_only), *args, **kwargs)
