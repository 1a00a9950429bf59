"""Non-reentrant, but only looks one container deep: tensors nested in a container inside a container
(e.g. ``[[x]]``, ``{"a": (x,)}``) are detached, so they get no gradient. Fixed examples usually nest one
level; the property tests' random structures nest deeper."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["nested.non-reentrant-participates"]
BREAKS = "non-reentrant: tensors two or more containers deep are detached (no gradient)"


def _detach_deep(value, depth=0):
    if isinstance(value, torch.Tensor):
        return value.detach() if depth >= 2 else value
    if isinstance(value, (list, tuple)):
        return type(value)(_detach_deep(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return {k: _detach_deep(v, depth + 1) for k, v in value.items()}
    return value


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False:
        args = _detach_deep(args, depth=-1)  # the args tuple itself is not a nesting level
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
