"""Helpers for mutants that break checkpoint by changing how it runs the user's function."""

import contextlib
import functools
import itertools

import torch

from conformance.data.vocabulary import OWN_KEYWORDS  # noqa: F401  (re-exported for mutants)


def on_calls(function, around):
    """function, with its call number i (0: the forward, 1 and up: recomputes) run as
    around(i, function, *args, **kwargs)."""
    counter = itertools.count()

    @functools.wraps(function)
    def wrapped(*args, **kwargs):
        return around(next(counter), function, *args, **kwargs)

    return wrapped


def recomputes_under(context):
    """An `around` that runs the forward as is and every recompute under context()."""

    def around(call, function, *args, **kwargs):
        if call == 0:
            return function(*args, **kwargs)
        with context():
            return function(*args, **kwargs)

    return around


def every_call_under(context):
    """An `around` that runs the forward and every recompute under context()."""

    def around(call, function, *args, **kwargs):
        with context():
            return function(*args, **kwargs)

    return around


@contextlib.contextmanager
def patched(owner, name, make_replacement):
    """owner.name replaced by make_replacement(the original) inside the block (e.g. torch.autograd.grad)."""
    original = getattr(owner, name)
    setattr(owner, name, make_replacement(original))
    try:
        yield
    finally:
        setattr(owner, name, original)


def rejecting(message):
    """A make_replacement for patched: the patched function raises RuntimeError(message) instead."""

    def replace(original):
        def rejected(*args, **kwargs):
            raise RuntimeError(message)

        return rejected

    return replace


def map_tensors(value, fn):
    """fn applied to the tensors of value, top level or inside a tuple/list."""
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, (tuple, list)):
        return type(value)(map_tensors(v, fn) for v in value)
    return value


def map_argument_aliases(out, args, fn):
    """out with fn applied to its tensors that share memory with a tensor argument (an argument returned
    as is, or a view of one)."""
    storages = {a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor)}
    return map_tensors(out, lambda t: fn(t) if t.untyped_storage().data_ptr() in storages else t)


class _BeforeBackward(torch.autograd.Function):
    """Identity on an output; its backward, which runs before the region's own, calls action()."""

    @staticmethod
    def forward(ctx, t, action):
        ctx.action = action
        return t.clone()

    @staticmethod
    def backward(ctx, grad):
        ctx.action()
        return grad, None


def before_backward(out, action):
    """out (a tensor, or tensors in a tuple/list) with action() run when backward reaches an output that
    requires grad, before the checkpointed region's own backward (and recompute) runs."""
    return map_tensors(out, lambda t: _BeforeBackward.apply(t, action) if t.requires_grad else t)
