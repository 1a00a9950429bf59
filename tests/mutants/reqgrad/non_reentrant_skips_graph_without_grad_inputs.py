"""Non-reentrant, but runs the region under no_grad when no top-level input requires grad ("nothing
to differentiate"): the parameters used inside get no gradient, nor do tensors nested in the arguments."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["reqgrad.non-reentrant-gradients", "nested.non-reentrant-participates"]
BREAKS = "non-reentrant: with no input requiring grad, the region records no graph (parameters get no gradient)"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_checkpointing_without_reentrant_input_requires_grad_False"]


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False and not any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
        with torch.no_grad():
            return function(*args, **kwargs)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
