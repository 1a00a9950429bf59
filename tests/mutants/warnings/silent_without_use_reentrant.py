"""Silently defaults use_reentrant to True: no warning when it is omitted."""

from tests.mutants._support.base import CheckpointError  # noqa: F401
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.base import checkpoint_sequential as _checkpoint_sequential

TARGET_CLAUSES = ["warnings.checkpoint-use-reentrant-omitted", "warnings.sequential-use-reentrant-omitted"]
BREAKS = "checkpoint and checkpoint_sequential without use_reentrant emit no warning"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_checkpoint_warns_if_use_reentrant_not_passed_explcitly"]


def checkpoint(function, *args, use_reentrant=True, **kwargs):
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=True, **kwargs):
    return _checkpoint_sequential(functions, segments, input, use_reentrant=use_reentrant, **kwargs)
