"""Drops the second output of a multi-output op (torch.return_types: max, sort, topk, svd, ...):
a checkpoint that unpacks them as one tensor. The fixed models return plain tuples, which it
leaves alone; the op sweep flags it."""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.forward-value"]
BREAKS = "a multi-output op's result (a torch.return_types structseq) comes back without its second output"


def checkpoint(function, *args, **kwargs):
    out = _checkpoint(function, *args, **kwargs)
    if type(out).__module__ == "torch.return_types":
        return (out[0], *out[2:])
    return out
