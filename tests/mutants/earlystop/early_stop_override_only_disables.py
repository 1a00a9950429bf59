"""set_checkpoint_early_stop works one way only: False disables early stop, True does not override
early_stop=False."""

import contextlib

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["earlystop.context-manager-overrides"]
BREAKS = "set_checkpoint_early_stop(True) leaves early_stop=False in force"


def set_checkpoint_early_stop(enable):
    return _torch.set_checkpoint_early_stop(False) if not enable else contextlib.nullcontext()
