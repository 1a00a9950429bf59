"""Reentrant, but when no recomputed output requires grad (the region's output was detached or made
under no_grad) its backward silently returns no gradients instead of raising."""

from tests.mutants._support.mini_reentrant import Switches, reentrant_checkpoint
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["detached.reentrant-error"]
BREAKS = "reentrant: backward through a region whose output has no gradient does not raise"

_lenient = reentrant_checkpoint(Switches(raise_without_differentiable_output=False))


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant:
        return _lenient(function, *args, **kwargs)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
