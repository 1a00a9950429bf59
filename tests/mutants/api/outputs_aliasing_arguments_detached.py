"""Detaches each output that shares memory with an argument (an argument returned as is, or a view of one),
as a checkpoint that sidesteps torch's "a view ... is being modified inplace" error that way would: values
are right and the memory is still shared, but backward never reaches the argument through that output."""

import torch

from tests.mutants._support.call_wrappers import map_argument_aliases
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "an output that is an argument or a view of one is detached, so no gradient flows through it"
UPSTREAM_TESTS = [
    "test_utils.py::TestCheckpoint::test_checkpoint_non_tensor",
    "test_autograd.py::TestSelectiveActivationCheckpoint::test_subclass_dispatching_sizes",
]


def checkpoint(function, *args, **kwargs):
    return map_argument_aliases(_checkpoint(function, *args, **kwargs), args, torch.Tensor.detach)
