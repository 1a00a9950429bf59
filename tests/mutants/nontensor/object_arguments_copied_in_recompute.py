"""Stashes the non-tensor arguments for the recompute with copy.deepcopy, as a checkpoint that makes its
saved state independent of the caller would: None, numbers, strings and functions deep-copy to
themselves, an object of the caller's own class arrives in the recompute as a copy."""

import copy

import torch

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["nontensor.arguments-pass-through"]
BREAKS = "the recompute receives deep copies of the non-tensor arguments (an object is a copy, not the one passed)"


def _copied_in_recompute(call, function, *args, **kwargs):
    if call > 0:
        args = tuple(a if isinstance(a, torch.Tensor) else copy.deepcopy(a) for a in args)
    return function(*args, **kwargs)


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, _copied_in_recompute), *args, **kwargs)
