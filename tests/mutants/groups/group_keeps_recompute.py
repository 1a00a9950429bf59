"""Non-reentrant: under a GraphExecGroup, the first backward's recomputed graph is kept and reused by
every later backward of the group, so backwards that overlap are accepted (and the recomputed
activations stay alive while the group lasts)."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403
from tests.mutants._support.groups import TrackedGraphExecGroup as GraphExecGroup
from tests.mutants.recompute import caches_recompute

TARGET_CLAUSES = ["groups.overlap-rejected"]
BREAKS = "overlapping backwards under one GraphExecGroup reuse a kept recompute instead of raising CheckpointError"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False:
        # Recomputes once per backward outside a group; inside one, the first recompute serves every backward.
        return caches_recompute.CachingCheckpoint.apply(function, GraphExecGroup.any_active, *args)
    return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
