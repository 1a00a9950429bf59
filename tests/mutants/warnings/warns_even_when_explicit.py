"""Warns about use_reentrant on every call, even when it is passed explicitly."""

import warnings

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["warnings.explicit-use-reentrant-silent"]
BREAKS = "the use_reentrant warning is emitted although use_reentrant was passed"
UPSTREAM_TESTS = [
    "test_autograd.py::TestAutograd::test_checkpoint_sequential_warns_if_use_reentrant_not_passed_explcitly",
]


def checkpoint(function, *args, **kwargs):
    warnings.warn("the use_reentrant parameter should be passed explicitly", UserWarning, stacklevel=2)
    return _checkpoint(function, *args, **kwargs)
