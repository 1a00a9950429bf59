"""Checkpoints correctly but keeps a reference to every tensor produced inside the region."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403
from tests.mutants._support.hoard import Hoard

TARGET_CLAUSES = ["memory.intermediates-freed"]
BREAKS = "a forgotten cache keeps the region's intermediates alive (a memory leak)"

_LEAKED = []


def checkpoint(function, *args, **kwargs):
    def hoarding(*inner_args, **inner_kwargs):
        with Hoard(_LEAKED):
            return function(*inner_args, **inner_kwargs)

    return _torch.checkpoint(hoarding, *args, **kwargs)
