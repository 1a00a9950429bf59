"""Leaves a saved-tensor hook pair installed when the non-reentrant forward raises (torch 2.6 did, while
the exception stayed alive); the leaked hooks break every later backward in the process."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["exceptions.no-leftover-state"]
BREAKS = "a failed non-reentrant forward leaves saved-tensor hooks behind"


def _leaked_unpack(_):
    raise RuntimeError("a saved-tensor hook leaked by an earlier failed checkpoint ran")


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    try:
        return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    except BaseException:
        if use_reentrant is False:
            torch._C._autograd._push_saved_tensors_default_hooks(lambda t: t, _leaked_unpack)
        raise
