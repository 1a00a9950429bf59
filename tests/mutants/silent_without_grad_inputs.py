"""Reentrant: swallows the 'no input requires grad' warning."""

import warnings

from tests.mutants._torch_based import CheckpointError, checkpoint_sequential  # noqa: F401
from tests.mutants._torch_based import checkpoint as _checkpoint

TARGET_CLAUSES = ["reqgrad.reentrant-warns"]
BREAKS = "emits no warning when no input requires grad (reentrant)"


def checkpoint(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _checkpoint(function, *args, **kwargs)
