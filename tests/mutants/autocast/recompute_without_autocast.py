"""Does not restore the forward's autocast state for the recompute: it always runs in full precision."""

import torch

from tests.mutants._support.call_wrappers import on_calls, recomputes_under
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["autocast.recompute-under-forward-state"]
BREAKS = "the recompute runs with autocast disabled even when the forward ran under autocast"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_checkpointing_non_reentrant_autocast_cpu"]


def _no_autocast():
    return torch.autocast("cpu", enabled=False)


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, recomputes_under(_no_autocast)), *args, **kwargs)
