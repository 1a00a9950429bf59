"""set_checkpoint_early_stop that, on exit, puts back the default (no override) instead of the value the
enclosing manager had set: inside `with set_checkpoint_early_stop(False):`, a nested manager's exit
silently brings early stop back (torch's test_nested_checkpoint_set_early_stop nests the managers)."""

import contextlib

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["earlystop.context-manager-overrides"]
BREAKS = "a nested set_checkpoint_early_stop restores the default on exit, not the enclosing manager's value"


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    _torch._enable_checkpoint_early_stop = enable
    try:
        yield
    finally:
        _torch._enable_checkpoint_early_stop = None  # the default, whatever was in force before
