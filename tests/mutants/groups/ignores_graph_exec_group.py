"""GraphExecGroup is a no-op context manager, also for the non-reentrant variant."""

import contextlib

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["groups.recompute-at-most-once"]
BREAKS = "every backward under one GraphExecGroup recomputes the region again"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_checkpoint_graph_execution_group"]


def GraphExecGroup():
    return contextlib.nullcontext()
