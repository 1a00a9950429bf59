"""A correct implementation that restores more process state than torch does: besides torch's RNG, Python's
global generator (`random`) and NumPy's (where the process has NumPy). Its recompute draws from them what the
forward drew, as torch's RNG is replayed, and leaves them afterwards where the caller had them, so a region
that draws from `random` gives the recompute the forward's numbers and leaves the generator where the
un-checkpointed run leaves it. torch replays only its own RNG: its recompute advances the others (the docs'
note: the recompute "can cause persistent states like the RNG state to be advanced"). Restoring them is
allowed, and what the plain run has: the run must pass with no declaration. torch's checkpoint underneath
(both variants), the reference's checkpoint_sequential over this checkpoint."""

from __future__ import annotations

import contextlib
import random
import sys

import torch.utils.checkpoint as torch_checkpoint

from conformance.adapters._torch_surface import *  # noqa: F403  (torch's optional helpers, listed once)
from reference_impl import sequential
from reference_impl.api import _use_reentrant_default


def _generator_states() -> dict:
    """The states of Python's global generator, and of NumPy's where the process has NumPy."""
    states = {"random": random.getstate()}
    if "numpy" in sys.modules:
        states["numpy"] = sys.modules["numpy"].random.get_state()
    return states


def _set_generator_states(states: dict) -> None:
    random.setstate(states["random"])
    if "numpy" in states:
        sys.modules["numpy"].random.set_state(states["numpy"])


@contextlib.contextmanager
def _replayed(forward_states: dict):
    """The generators as the forward found them for the block; the caller's again after it."""
    callers = _generator_states()
    _set_generator_states(forward_states)
    try:
        yield
    finally:
        _set_generator_states(callers)


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    forward_states, calls = _generator_states(), []

    def replaying(*inner_args, **inner_kwargs):
        calls.append(1)
        if len(calls) == 1 or not preserve_rng_state:  # the forward; or no replay asked for
            return function(*inner_args, **inner_kwargs)
        with _replayed(forward_states):  # a recompute (one per backward that needs it)
            return function(*inner_args, **inner_kwargs)

    return torch_checkpoint.checkpoint(replaying, *args, use_reentrant=use_reentrant,
                                       preserve_rng_state=preserve_rng_state, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, preserve_rng_state=True):
    if use_reentrant is None:
        use_reentrant = _use_reentrant_default("checkpoint_sequential", stacklevel=2)
    return sequential.checkpoint_sequential(checkpoint, functions, segments, input, use_reentrant, preserve_rng_state)
