"""The recompute leaves state outside the region as the forward left it (both variants).

Implements the SHOULD the harness derives (clause ``modulestate.buffers-match``) from the documented
warning "If the `function` invocation during the backward pass differs from the forward pass, e.g.,
due to a global variable, the checkpointed version may not be equivalent": a module's buffers
(BatchNorm's running statistics and its batch counter, any tensor the function updates in place)
are updated once per step, by the forward, and not a second time by the recompute.

How, for any function and not only BatchNorm: the recompute runs under a dispatch mode that sees
each aten operator. An operator's schema says which arguments it writes (``Tensor(a!)``). When the
recompute is about to write into a tensor it did not create itself, that tensor is state from
outside the region (a buffer, a global): the operator writes into a scratch copy instead. Tensors
the recompute creates (an output, or a buffer it allocates and an operator then fills, as rrelu's
noise) are written as usual; they are told apart by their storage, so a view of outside state is
outside state too. Only in-place writes are covered: state rebound in Python (``self.count += 1``)
is out of a checkpoint's reach.
"""

from __future__ import annotations

import functools

import torch
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
    return tensor.untyped_storage().data_ptr()


class OutsideStateKept(TorchDispatchMode):
    """Run under this mode, a recompute writes outside state into scratch copies (see module doc)."""

    def __init__(self):
        super().__init__()
        self.created = set()  # storages the recompute allocated, by address

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        writes = written_arguments(func)
        if writes:
            args, kwargs = self._redirect(writes, list(args), dict(kwargs))
        out = func(*args, **kwargs)
        if not returns_alias(func):
            for tensor in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(tensor, torch.Tensor):
                    self.created.add(_storage(tensor))
        return out

    def _redirect(self, writes, args, kwargs):
        for position, name in writes:
            if position < len(args):
                args[position] = self._scratch(args[position])
            elif name in kwargs:
                kwargs[name] = self._scratch(kwargs[name])
        return args, kwargs

    def _scratch(self, value):
        """A copy of outside state to write into; what the recompute created is written as it is."""
        if isinstance(value, (list, tuple)):  # foreach operators write lists of tensors
            return [self._scratch(item) for item in value]
        if isinstance(value, torch.Tensor) and _storage(value) not in self.created:
            return value.clone()
        return value
