"""Restores the forward's RNG state for the first recompute only; later recomputes draw afresh."""

import torch

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["retain.repeated-backward"]
BREAKS = "a second retained backward recomputes with different dropout masks"


def _stale_rng_after_first_recompute(call, function, *args, **kwargs):
    if call >= 2:
        torch.rand(1)  # the stashed state was consumed by the first recompute: the stream has moved on
    return function(*args, **kwargs)


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, _stale_rng_after_first_recompute), *args, **kwargs)
