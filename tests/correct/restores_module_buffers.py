"""A correct implementation that handles modules otherwise than torch: where the checkpointed callable is an
nn.Module (or its bound forward, or a partial of its forward), the recompute runs it on copies of its buffers, taken
when checkpoint is called, and puts the module's own buffers back afterwards, so BatchNorm's running statistics, and any counter a module keeps
in a buffer, are updated once per forward, as without checkpoint, where torch's recompute updates them a second
time. The docs do not say that the recompute may change state (modulestate.buffers-match, a SHOULD this meets for
such callables); a plain function calling a module is recomputed as torch does. The buffers are swapped, not
copied back: the recompute's graph keeps the copies it used, untouched. torch's checkpoint underneath (both
variants), the reference's checkpoint_sequential over this checkpoint."""

from __future__ import annotations

import contextlib
import functools

import torch
import torch.utils.checkpoint as torch_checkpoint

from conformance.adapters._torch_surface import *  # noqa: F403  (torch's optional helpers, listed once)
from reference_impl import sequential
from reference_impl.api import _use_reentrant_default


def _module_of(function):
    """The module a checkpointed callable runs: the module itself, a bound forward's, a partial's first argument."""
    if isinstance(function, functools.partial):
        return _module_of(function.args[0]) if function.args else _module_of(function.func)
    return function if isinstance(function, torch.nn.Module) else getattr(function, "__self__", None)


def _buffer_copies(module: torch.nn.Module) -> list:
    """(submodule, name, a copy) for each buffer of the module and its submodules: taken in checkpoint() itself,
    outside any mode context_fn enters, so that no copy is an op of the region (selective checkpointing would
    look for it in its store)."""
    with torch.no_grad():
        return [(m, name, b.detach().clone()) for m in module.modules()
                for name, b in m.named_buffers(recurse=False) if b is not None]


@contextlib.contextmanager
def _on(copies):
    """The module runs on the copies (as the forward left them: what the plain run's graph would have kept); its
    own buffers are put back after."""
    own = [(m, name, getattr(m, name)) for m, name, _ in copies]
    for m, name, copy in copies:
        setattr(m, name, copy)
    try:
        yield
    finally:
        for m, name, buffer in own:
            setattr(m, name, buffer)


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    module = _module_of(function)
    if not isinstance(module, torch.nn.Module):
        return torch_checkpoint.checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    copies, calls = _buffer_copies(module), []

    def buffers_kept(*inner_args, **inner_kwargs):
        calls.append(1)
        if len(calls) == 1:  # the forward updates the module's own buffers, as without checkpoint
            return function(*inner_args, **inner_kwargs)
        with _on(copies):  # a recompute: on the copies
            return function(*inner_args, **inner_kwargs)

    return torch_checkpoint.checkpoint(buffers_kept, *args, use_reentrant=use_reentrant, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, preserve_rng_state=True):
    if use_reentrant is None:
        use_reentrant = _use_reentrant_default("checkpoint_sequential", stacklevel=2)
    return sequential.checkpoint_sequential(checkpoint, functions, segments, input, use_reentrant, preserve_rng_state)
