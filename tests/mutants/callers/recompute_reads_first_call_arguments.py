"""Keeps the arguments of the first checkpoint of each callable (a module, a bound method's module, a
partial's function, a function), by its identity, and recomputes every later checkpoint of the same
callable on them: a layer checkpointed twice in one forward (shared layers, tied weights, siamese towers)
gets its second region's gradients from the first region's inputs."""

import functools
import weakref

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "a callable checkpointed twice is recomputed on its first call's arguments"

_first_arguments = weakref.WeakKeyDictionary()  # the callable's owner -> the arguments it was first given


def _owner(function):
    """What makes two callables the same one: the module behind a bound method, the function behind a partial."""
    while isinstance(function, functools.partial):
        function = function.args[0] if function.args else function.func
    return getattr(function, "__self__", function)


def checkpoint(function, *args, **kwargs):
    try:
        first = _first_arguments.setdefault(_owner(function), args)
    except TypeError:  # an owner that cannot be weakly referenced: nothing kept
        first = args

    def around(call, function, *given, **keywords):
        return function(*(given if call == 0 else first), **keywords)

    return _checkpoint(on_calls(function, around), *args, **kwargs)
