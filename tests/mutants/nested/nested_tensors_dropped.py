"""Non-reentrant, but treats tensors inside lists, tuples and dicts as constants (detached), as if
only top-level tensors could take part in autograd."""

import torch
from torch.utils._pytree import tree_map

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["nested.non-reentrant-participates"]
BREAKS = "non-reentrant: nested tensors are detached, so they get no gradient"


def _detached(value):
    return tree_map(lambda v: v.detach() if isinstance(v, torch.Tensor) else v, value)


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False:
        args = tuple(a if isinstance(a, torch.Tensor) else _detached(a) for a in args)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
