"""Recomputed tensors are also held until the whole backward has finished, not freed once used.

The bug soulitzer describes for a cache of recomputed (or offloaded) tensors in pytorch/pytorch#70135
("instead of getting cleared as soon as they are used in backward, the cached variables stay alive
... until the graph dies (end of entire backward pass)"); radixark/miles#2862 measured Megatron's full
recompute keeping completed layers' activations for tens of seconds.
"""

import torch

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.hoard import Hoard

TARGET_CLAUSES = ["memory.recomputed-freed-during-backward"]
BREAKS = "every tensor a recompute makes is held until the backward that ran it has finished"
UPSTREAM_TESTS = ["test_autograd.py::TestSelectiveActivationCheckpoint::test_storage_lifetime"]

_HELD = []


def _held_until_backward_ends(call, function, *args, **kwargs):
    if call == 0:
        return function(*args, **kwargs)
    try:
        torch.autograd.Variable._execution_engine.queue_callback(_HELD.clear)  # when this backward ends
    except RuntimeError:  # a recompute outside backward (a saved tensor read directly): nothing to hold
        return function(*args, **kwargs)
    with Hoard(_HELD):
        return function(*args, **kwargs)


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, _held_until_backward_ends), *args, **kwargs)
