"""Non-reentrant: tensors returned inside a dict are detached (only tensors and tuples stay in the graph)."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "tensors in dict outputs do not take part in autograd"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_checkpointing_without_reentrant_arbitrary_input_output"]


def _detach(value):
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, (list, tuple)):
        return type(value)(_detach(v) for v in value)
    if isinstance(value, dict):
        return {k: _detach(v) for k, v in value.items()}
    return value


def checkpoint(function, *args, **kwargs):
    out = _checkpoint(function, *args, **kwargs)
    return _detach(out) if isinstance(out, dict) else out
