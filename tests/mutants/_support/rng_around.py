"""Mutants with their own (broken) RNG handling: torch's checkpoint runs with preserve_rng_state=False
and the function's forward (call 0) and recomputes (calls 1+) run under the mutant's RNG contexts."""

import contextlib

import torch

from tests.mutants._support.call_wrappers import on_calls
from conformance.adapters._support import sequential_over
from tests.mutants._support.base import checkpoint as _checkpoint


@contextlib.contextmanager
def replaying(state):
    """The correct recompute context: draw from state, give the caller's stream back afterwards."""
    with torch.random.fork_rng(devices=[]):
        torch.set_rng_state(state)
        yield


def checkpoint_with_rng(forward_context, recompute_context):
    """checkpoint whose forward runs under forward_context(stash) and recomputes under
    recompute_context(stash), stash being the CPU RNG state at the call."""

    def checkpoint(function, *args, preserve_rng_state=True, **kwargs):
        if not preserve_rng_state:
            return _checkpoint(function, *args, preserve_rng_state=False, **kwargs)
        stash = torch.get_rng_state()

        def around(call, function, *args, **kwargs):
            with (forward_context if call == 0 else recompute_context)(stash):
                return function(*args, **kwargs)

        return _checkpoint(on_calls(function, around), *args, preserve_rng_state=False, **kwargs)

    return checkpoint, sequential_over(checkpoint)


def as_is(stash):
    return contextlib.nullcontext()
