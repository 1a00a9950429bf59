"""set_checkpoint_debug_enabled is a no-op context manager."""

import contextlib

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["debug.global-override"]
BREAKS = "set_checkpoint_debug_enabled(True) does not turn the debug trace on"


def set_checkpoint_debug_enabled(enabled):
    return contextlib.nullcontext()
