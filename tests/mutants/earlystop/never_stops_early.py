"""Non-reentrant: no early stop by default; every recompute runs the whole function."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["earlystop.default-stops"]
BREAKS = "the default non-reentrant recompute runs the whole function instead of stopping early"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_custom_autograd_ac_early_stop"]


def checkpoint(function, *args, use_reentrant=None, early_stop=False, **kwargs):
    # early_stop now defaults to False; an explicit True (or the context manager) still works.
    return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, early_stop=early_stop, **kwargs)
