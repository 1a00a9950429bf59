"""set_checkpoint_early_stop is a no-op context manager."""

import contextlib

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["earlystop.context-manager-disables", "earlystop.context-manager-overrides"]
BREAKS = "set_checkpoint_early_stop(...) changes nothing: only the early_stop argument counts"
UPSTREAM_TESTS = [
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_set_early_stop",
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_set_early_stop_no_recompution_needed",
]


def set_checkpoint_early_stop(enable):
    return contextlib.nullcontext()
