"""Checkpoints correctly but keeps a reference to every tensor produced inside the region."""

import torch.utils.checkpoint as _torch
from torch.utils._python_dispatch import TorchDispatchMode

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["memory.intermediates-freed"]
BREAKS = "a forgotten cache keeps the region's intermediates alive (a memory leak)"

_LEAKED = []


class _Hoard(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        _LEAKED.append(out)
        return out


def checkpoint(function, *args, **kwargs):
    def hoarding(*inner_args, **inner_kwargs):
        with _Hoard():
            return function(*inner_args, **inner_kwargs)

    return _torch.checkpoint(hoarding, *args, **kwargs)
