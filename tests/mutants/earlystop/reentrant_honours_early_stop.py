"""Reentrant: an explicit early_stop argument is honoured instead of ignored."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["earlystop.reentrant-ignores-keyword"]
BREAKS = "use_reentrant=True with early_stop=True stops the recompute early"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant and kwargs.get("early_stop"):
        use_reentrant = False  # the early-stopping algorithm
    return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
