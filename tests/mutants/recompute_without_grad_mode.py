"""Runs the recompute with grad disabled (the engine's mode in backward), so it records no graph."""

import torch

from tests.mutants._call_wrappers import on_calls, recomputes_under
from tests.mutants._torch_based import CheckpointError, checkpoint_sequential  # noqa: F401
from tests.mutants._torch_based import checkpoint as _checkpoint

TARGET_CLAUSES = ["gradmode.recompute-grad-enabled"]
BREAKS = "the recompute runs under no_grad instead of enabling grad"


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, recomputes_under(torch.no_grad)), *args, **kwargs)
