"""Takes the device whose RNG state it stashes from the first tensor argument, as hand-written checkpoints
do (``next(a.device for a in args if torch.is_tensor(a))``): a function called with Python values only,
no tensor among its arguments, cannot be checkpointed (torch's test_checkpoint_no_tensors)."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["nontensor.arguments-pass-through"]
BREAKS = "a call without any tensor argument fails (the RNG device is taken from the first tensor argument)"
UPSTREAM_TESTS = ["test_utils.py::TestCheckpoint::test_checkpoint_no_tensors"]


def checkpoint(function, *args, **kwargs):
    tensors = [a for a in args if torch.is_tensor(a)]
    if not tensors:
        raise RuntimeError("checkpoint: found no tensor argument to take the RNG device from")
    return _checkpoint(function, *args, **kwargs)
