"""Non-reentrant: runs the function's forward under no_grad, like the reentrant variant."""

import torch

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["gradmode.non-reentrant-records-graph"]
BREAKS = "the non-reentrant forward records no graph, so backward inside the region fails"
UPSTREAM_TESTS = [
    "test_autograd.py::TestAutograd::test_checkpointing_without_reentrant_dataparallel",
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_same_graph_early_stop_False",
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_same_graph_early_stop_True",
]


def _forward_without_grad(call, function, *args, **kwargs):
    if call == 0:
        with torch.no_grad():
            return function(*args, **kwargs)
    return function(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False:
        function = on_calls(function, _forward_without_grad)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
