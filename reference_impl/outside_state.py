"""The recompute leaves state outside the region as the forward left it (both variants).

Implements the SHOULD the harness derives (clause ``modulestate.buffers-match``) from the documented
warning "If the `function` invocation during the backward pass differs from the forward pass, e.g.,
due to a global variable, the checkpointed version may not be equivalent": a module's buffers
(BatchNorm's running statistics and its batch counter, any tensor the function updates in place)
are updated once per step, by the forward, and not a second time by the recompute.

How, for any function and not only BatchNorm. An aten operator's schema says which arguments it
writes (``Tensor(a!)``). When the recompute is about to write into a tensor it did not create itself,
that tensor is state from outside the region (a buffer, a global): the operator writes into a scratch
copy instead. Tensors the recompute creates (an output, or a buffer it allocates and an operator then
fills, as rrelu's noise) are written as usual; they are told apart by their storage, so a view of
outside state is outside state too. Seeing every aten operator costs a Python call each (a dispatch
mode), so it is done only where state can be written: the recompute runs under a cheaper mode that
sees each outermost torch call (``TorchFunctionMode``), records the storages it creates, and watches
the aten operators of a call only if one of its tensor arguments is outside state that does not
require grad (a buffer, not a parameter). State rebound in Python (``self.count += 1``) and
parameters written in place are out of reach.
"""

from __future__ import annotations

import functools

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten

# Operators that write arguments their schema does not mark as written: native_batch_norm updates
# running_mean and running_var (its functional twin _native_batch_norm_legit declares them).
_UNDECLARED_WRITES = {aten.native_batch_norm.default: ("running_mean", "running_var")}


@functools.cache
def written_arguments(op) -> tuple[tuple[int, str], ...]:
    """(position, name) of each argument the operator writes in place."""
    undeclared = _UNDECLARED_WRITES.get(op, ())
    return tuple(
        (i, arg.name)
        for i, arg in enumerate(op._schema.arguments)
        if (arg.alias_info is not None and arg.alias_info.is_write) or arg.name in undeclared
    )


@functools.cache
def returns_alias(op) -> bool:
    """Whether an output of the operator is a view of (or is) an argument: it allocates no storage."""
    return any(ret.alias_info is not None for ret in op._schema.returns)


def _storage(tensor):
    try:
        return tensor.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):  # sparse and other layouts without a storage of their own
        return None


def _tensors(values):
    """The tensors among values, looking one level into lists and tuples (foreach operators)."""
    for value in values:
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (item for item in value if isinstance(item, torch.Tensor))


class AtenOps(TorchDispatchMode):
    """The aten operators of a watched call: outside state is written into scratch copies."""

    def __init__(self, created):
        super().__init__()
        self.created = created  # storages the recompute allocated, by address (shared with the caller)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        writes = written_arguments(func)
        if writes:
            args, kwargs = list(args), dict(kwargs)
            for position, name in writes:
                if position < len(args):
                    args[position] = self._scratch(args[position])
                elif name in kwargs:
                    kwargs[name] = self._scratch(kwargs[name])
        out = func(*args, **kwargs)
        if not returns_alias(func):
            self.created.update(_storage(t) for t in _tensors(out if isinstance(out, (tuple, list)) else (out,)))
        return out

    def _scratch(self, value):
        """A copy of outside state to write into; what the recompute created is written as it is."""
        if isinstance(value, (list, tuple)):
            return [self._scratch(item) for item in value]
        if isinstance(value, torch.Tensor) and _storage(value) not in self.created:
            return value.clone()
        return value


class OutsideStateKept(TorchFunctionMode):
    """The recompute runs under this mode: it writes no outside state (see the module docstring).

    Torch calls made inside a handled call run without the mode, so each call seen here is outermost.
    """

    def __init__(self):
        super().__init__()
        self.created = set()
        self.aten_ops = self.watcher()

    def watcher(self):
        return AtenOps(self.created)

    def watch(self, inputs) -> bool:
        """Whether the call may write state: a tensor argument outside the recompute, without grad."""
        return any(not t.requires_grad and _storage(t) not in self.created for t in inputs)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        inputs = list(_tensors((*args, *kwargs.values())))
        if self.watch(inputs):
            with self.aten_ops:
                out = func(*args, **kwargs)
        else:
            out = func(*args, **kwargs)
        # An output that shares an argument's storage is a view of it: outside if the argument is.
        shared = {_storage(t) for t in inputs}
        for tensor in _tensors(out if isinstance(out, (tuple, list)) else (out,)):
            if _storage(tensor) not in shared:
                self.created.add(_storage(tensor))
        return out
