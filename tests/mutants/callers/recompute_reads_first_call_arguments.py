"""Keeps (a copy of) the arguments of the first checkpoint of each callable (a module, a bound method's
module, a partial's function, a function), by its identity, and recomputes every later checkpoint of the same
callable on them: a layer checkpointed twice in one forward (shared layers, tied weights, siamese towers)
gets its second region's gradients from the first region's inputs."""

import functools
import weakref

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "a callable checkpointed twice is recomputed on its first call's arguments"

_first_arguments = weakref.WeakKeyDictionary()  # the callable's owner -> copies of the arguments it was first given


def _owner(function):
    """What makes two callables the same one: the module behind a bound method, the function behind a partial."""
    while isinstance(function, functools.partial):
        function = function.args[0] if function.args else function.func
    return getattr(function, "__self__", function)


def _copy(value):
    return value.detach().clone() if isinstance(value, torch.Tensor) else value


def _with_values_of(given, kept):
    """The recompute's argument with the kept argument's values (its gradient still flows to the given one)."""
    if isinstance(given, torch.Tensor) and isinstance(kept, torch.Tensor) and (given.shape, given.dtype) == (kept.shape, kept.dtype):
        return given + (kept - given).detach()
    return given


def checkpoint(function, *args, **kwargs):
    owner, first = _owner(function), None
    try:
        if owner in _first_arguments:
            first = _first_arguments[owner]  # a later checkpoint of the callable: recomputed on the first's
        else:
            _first_arguments[owner] = tuple(_copy(a) for a in args)
    except TypeError:  # an owner that cannot be weakly referenced: nothing kept
        pass

    def around(call, function, *given, **keywords):
        if call and first is not None:
            given = tuple(_with_values_of(g, k) for g, k in zip(given, first))
        return function(*given, **keywords)

    return _checkpoint(on_calls(function, around), *args, **kwargs)
