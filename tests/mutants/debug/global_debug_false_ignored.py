"""set_checkpoint_debug_enabled works one way only: True turns the trace on, False does not turn
debug=True off."""

import contextlib

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["debug.global-override"]
BREAKS = "set_checkpoint_debug_enabled(False) does not override debug=True"


def set_checkpoint_debug_enabled(enabled):
    return _torch.set_checkpoint_debug_enabled(True) if enabled else contextlib.nullcontext()
