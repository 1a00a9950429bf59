"""Treats arguments with no elements as nothing to checkpoint and detaches them (as DeepSpeed's activation
partitioning skips zero-size tensors): their values are right, but backward never reaches them, so an
empty leaf ends with no gradient where the un-checkpointed run gives it an empty one."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "empty (0-element) tensor arguments are detached, so they get no gradient"


def checkpoint(function, *args, **kwargs):
    args = tuple(a.detach() if isinstance(a, torch.Tensor) and a.numel() == 0 else a for a in args)
    return _checkpoint(function, *args, **kwargs)
