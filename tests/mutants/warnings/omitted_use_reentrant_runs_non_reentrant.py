"""Warns when use_reentrant is omitted, then runs the non-reentrant variant: the documented default
is use_reentrant=True."""

import warnings

from tests.mutants._support.base import CheckpointError  # noqa: F401
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.base import checkpoint_sequential as _checkpoint_sequential

TARGET_CLAUSES = ["warnings.checkpoint-use-reentrant-omitted", "warnings.sequential-use-reentrant-omitted"]
BREAKS = "an omitted use_reentrant selects use_reentrant=False after the warning"

_MESSAGE = "the use_reentrant parameter should be passed explicitly"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is None:
        warnings.warn(_MESSAGE, stacklevel=2)
        use_reentrant = False
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    if use_reentrant is None:
        warnings.warn(_MESSAGE, stacklevel=2)
        use_reentrant = False
    return _checkpoint_sequential(functions, segments, input, use_reentrant=use_reentrant, **kwargs)
