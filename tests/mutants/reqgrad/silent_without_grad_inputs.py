"""Reentrant: swallows the 'no input requires grad' warning."""

import warnings

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["reqgrad.reentrant-warns"]
BREAKS = "emits no warning when no input requires grad (reentrant)"


def checkpoint(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _checkpoint(function, *args, **kwargs)
