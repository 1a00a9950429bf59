"""Runs the recompute with grad disabled (the engine's mode in backward), so it records no graph."""

import torch

from tests.mutants._support.call_wrappers import on_calls, recomputes_under
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["gradmode.recompute-grad-enabled"]
BREAKS = "the recompute runs under no_grad instead of enabling grad"


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, recomputes_under(torch.no_grad)), *args, **kwargs)
