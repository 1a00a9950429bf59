"""set_checkpoint_debug_enabled(None) keeps the enclosing setting instead of deferring to debug=."""

import contextlib

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["debug.global-override"]
BREAKS = "set_checkpoint_debug_enabled(None) inside another setting does not defer to the debug argument"


def set_checkpoint_debug_enabled(enabled):
    return contextlib.nullcontext() if enabled is None else _torch.set_checkpoint_debug_enabled(enabled)
