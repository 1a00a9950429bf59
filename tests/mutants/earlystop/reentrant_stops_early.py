"""Reentrant: runs the non-reentrant algorithm, so its recompute stops early."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["earlystop.reentrant-recomputes-all"]
BREAKS = "use_reentrant=True recomputes only up to the last needed tensor, not the whole function"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    return _torch.checkpoint(function, *args, use_reentrant=False, **kwargs)
