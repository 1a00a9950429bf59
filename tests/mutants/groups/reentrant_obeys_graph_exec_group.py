"""Reentrant: under a GraphExecGroup, the region is recomputed once and reused by later backwards."""

import contextlib

import torch.utils.checkpoint as _torch

from tests.mutants.recompute import caches_recompute
from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["groups.reentrant-noop"]
BREAKS = "GraphExecGroup also applies to use_reentrant=True instead of being a no-op"

_active_groups = []


@contextlib.contextmanager
def GraphExecGroup():
    _active_groups.append(True)
    try:
        with _torch.GraphExecGroup():
            yield
    finally:
        _active_groups.pop()


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant:
        # Outside a group every backward recomputes, as it should; inside one, the first recompute is reused.
        return caches_recompute.CachingCheckpoint.apply(function, lambda: bool(_active_groups), *args)
    return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
