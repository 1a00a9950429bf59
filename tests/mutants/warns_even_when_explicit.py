"""Warns about use_reentrant on every call, even when it is passed explicitly."""

import warnings

from tests.mutants._torch_based import CheckpointError, checkpoint_sequential  # noqa: F401
from tests.mutants._torch_based import checkpoint as _checkpoint

TARGET_CLAUSES = ["warnings.explicit-use-reentrant-silent"]
BREAKS = "the use_reentrant warning is emitted although use_reentrant was passed"


def checkpoint(function, *args, **kwargs):
    warnings.warn("the use_reentrant parameter should be passed explicitly", UserWarning, stacklevel=2)
    return _checkpoint(function, *args, **kwargs)
