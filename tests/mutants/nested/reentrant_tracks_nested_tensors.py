"""Reentrant, but flattens lists, tuples and dicts so that the tensors inside become inputs of the
autograd Function: nested tensors take part in autograd, which the reentrant variant does not do."""

from torch.utils._pytree import tree_flatten, tree_unflatten

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["nested.reentrant-not-considered"]
BREAKS = "reentrant: tensors nested in containers make the output require grad"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if not use_reentrant:
        return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    leaves, spec = tree_flatten(args)
    return _checkpoint(lambda *flat: function(*tree_unflatten(list(flat), spec)), *leaves,
                       use_reentrant=True, **kwargs)
