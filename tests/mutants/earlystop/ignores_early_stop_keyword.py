"""Non-reentrant: the early_stop keyword is accepted but dropped."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["earlystop.keyword-disables"]
BREAKS = "early_stop=False is ignored: the recompute still stops early"


def checkpoint(function, *args, early_stop=True, **kwargs):
    return _torch.checkpoint(function, *args, **kwargs)
