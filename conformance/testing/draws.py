"""Random draws from fixed seeds: the re-run that tells a failure of the RNG from any other.

Under :func:`fixed`, every random op (an aten op tagged ``nondeterministic_seeded``: dropout, bernoulli, rand,
normal_, ...) draws from a seed of its own, fixed by the op and its arguments, and leaves the global RNG
streams as they were. The checkpointed and the plain run then draw the same numbers whatever an
implementation does with the RNG state, and nothing either does moves the stream the caller sees: a
difference that vanishes so was made by the random draws (conformance/plugin/rerun.py charges it to the rng clauses).
"""

from __future__ import annotations

import contextlib
import zlib

import torch
from torch.utils._python_dispatch import TorchDispatchMode

class _FixedDraws(TorchDispatchMode):
    def __init__(self, salt: str = ""):
        super().__init__()
        self.salt = salt  # what makes one process's fixed draws unlike another's (a distributed rank)
        self.replaced = 0  # random ops drawn from a fixed seed: none, and the re-run showed nothing

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if torch.Tag.nondeterministic_seeded not in func.tags:
            return func(*args, **kwargs)
        self.replaced += 1
        if kwargs.get("generator") is not None:
            kwargs["generator"] = None  # a caller's own generator is fixed the same way
        with torch.random.fork_rng(devices=_cuda_devices(), device_type="cuda"):
            torch.manual_seed(zlib.crc32((self.salt + _signature(func, args, kwargs)).encode()))
            return func(*args, **kwargs)


def _signature(func, args, kwargs) -> str:
    """The op and its arguments: shapes, dtypes, numbers, and the values of the tensors it reads (bernoulli of two
    probability tensors draws from two seeds; the forward's draw and its recompute's, from equal inputs, from one).
    A tensor the op fills in place is read by its shape only: its values are whatever memory held. What it cannot
    tell apart: two draws of one op from equal arguments, e.g. two ``torch.randn(4, 4)``, or CPU dropout's masks
    of one shape (it fills an empty mask in place), which are equal here: a bug that only swaps such draws reads as
    the RNG's."""
    written = {a.name for a in func._schema.arguments if a.alias_info is not None and a.alias_info.is_write}
    named = [(a.name, args[i] if i < len(args) else kwargs.get(a.name)) for i, a in enumerate(func._schema.arguments)]
    return f"{func}:" + ",".join(_described(value, name in written) for name, value in named)


def _described(value, written: bool) -> str:
    if not isinstance(value, torch.Tensor):
        return repr(value)
    shape = f"{tuple(value.shape)}{value.dtype}"
    if written or value.numel() == 0:
        return shape
    values = value.detach().double().flatten()
    return f"{shape}:{float(values.sum())!r}:{float((values * torch.arange(1, values.numel() + 1, dtype=values.dtype, device=values.device)).sum())!r}"


def _cuda_devices() -> list[int]:
    if not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return []
    return list(range(torch.cuda.device_count()))  # manual_seed seeds them all: all are put back


_active: list[_FixedDraws] = []


@contextlib.contextmanager
def fixed(salt: str = ""):
    """Every random op in this thread draws from its fixed seed (``salt`` added). Yields the mode: ``replaced``
    counts the draws it fixed. Work this thread hands to other processes (distributed ranks) asks
    :func:`handed_over` whether to fix theirs too."""
    with _FixedDraws(salt) as mode:
        _active.append(mode)
        try:
            yield mode
        finally:
            _active.pop()


def active() -> bool:
    """Whether this thread's draws are fixed: what a cache of plain runs keys on (a re-run compares with its own)."""
    return bool(_active)


def handed_over() -> bool:
    """Whether work this thread hands to other processes (distributed ranks) is to fix its draws too, each process
    with a salt of its own; if so, their draws count as this re-run's."""
    if _active:
        _active[-1].replaced += 1
    return bool(_active)
