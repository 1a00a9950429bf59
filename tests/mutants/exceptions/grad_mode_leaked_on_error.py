"""Leaves grad mode disabled when the function raises (no try/finally around its no_grad switch)."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["exceptions.no-leftover-state"]
BREAKS = "after a failed forward, grad mode stays disabled"


def checkpoint(function, *args, **kwargs):
    try:
        return _checkpoint(function, *args, **kwargs)
    except BaseException:
        torch.set_grad_enabled(False)  # what `set_grad_enabled(False); run; set_grad_enabled(prev)` leaves
        raise
