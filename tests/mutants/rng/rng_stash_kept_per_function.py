"""Keeps the RNG stash on the checkpointed callable instead of on the call: each call of a function replaces its
stash, and the first recompute takes it. One module checkpointed on several inputs before one backward (a shared
layer, a per-sample proxy network) recomputes its first region with the last call's state, and the others find no
stash at all. State kept per callable is a real pattern (modelscope/ms-swift#10142 memoizes requires_grad per
function; facebookresearch/fairscale's checkpoint_wrapper kept per-module state and could not run one module twice
in a forward)."""

import torch

from conformance.adapters._support import sequential_over
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.rng_around import replaying

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "the RNG stash is kept per function, replaced by each call and taken by the first recompute"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_checkpointing"]

_stashes = {}  # id(function) -> the RNG state of its latest call


def checkpoint(function, *args, preserve_rng_state=True, **kwargs):
    if not preserve_rng_state:
        return _checkpoint(function, *args, preserve_rng_state=False, **kwargs)
    _stashes[id(function)] = torch.get_rng_state()

    def around(call, inner, *args, **kwargs):
        if call == 0:
            return inner(*args, **kwargs)
        with replaying(_stashes.pop(id(function))):
            return inner(*args, **kwargs)

    return _checkpoint(on_calls(function, around), *args, preserve_rng_state=False, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
