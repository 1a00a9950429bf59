"""Reentrant: under a GraphExecGroup, the region is recomputed once and reused by later backwards."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403
from tests.mutants._support.groups import TrackedGraphExecGroup as GraphExecGroup
from tests.mutants.recompute import caches_recompute

TARGET_CLAUSES = ["groups.reentrant-noop"]
BREAKS = "GraphExecGroup also applies to use_reentrant=True instead of being a no-op"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant:
        # Outside a group every backward recomputes, as it should; inside one, the first recompute is reused.
        return caches_recompute.CachingCheckpoint.apply(function, GraphExecGroup.any_active, *args)
    return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
