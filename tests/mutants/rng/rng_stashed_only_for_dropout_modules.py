"""The RNG state is stashed only where the checkpointed module holds a dropout module: a block that draws
through functional dropout (Llama's and Mixtral's attention dropout, F.dropout inside the attention
function) is recomputed with fresh masks. Plain functions keep the stash, so only real blocks show it.

Flagged by the models area only (test_models.py: llama, mixtral); the small-function tests checkpoint
dropout as an nn.Dropout module or in plain functions, both of which keep the stash."""

import functools

from torch import nn

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["rng.same-gradients"]
BREAKS = "the RNG is replayed only for modules holding an nn.Dropout or RReLU: functional dropout in a block is drawn afresh"

_RANDOM_MODULES = (nn.modules.dropout._DropoutNd, nn.RReLU)


def _module_of(function):
    """The module behind the function: itself, a bound method's owner, or a partial's first bound argument
    (transformers checkpoints partial(forward, block, **kwargs))."""
    if isinstance(function, functools.partial):
        return next((a for a in function.args if isinstance(a, nn.Module)), None) or _module_of(function.func)
    return function if isinstance(function, nn.Module) else getattr(function, "__self__", None)


def checkpoint(function, *args, **kwargs):
    module = _module_of(function)
    if isinstance(module, nn.Module) and not any(isinstance(m, _RANDOM_MODULES) for m in module.modules()):
        kwargs["preserve_rng_state"] = False
    return _checkpoint(function, *args, **kwargs)
