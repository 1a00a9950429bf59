"""Warns a DeprecationWarning of its own on every call, as an implementation that calls a deprecated torch API
in each forward does (RETURNN's scope: torch.is_autocast_cpu_enabled())."""

import warnings

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["warnings.no-warnings-of-its-own"]
BREAKS = "every call warns a DeprecationWarning the function does not"


def checkpoint(function, *args, **kwargs):
    warnings.warn("torch.is_autocast_cpu_enabled() is deprecated", DeprecationWarning, stacklevel=2)
    return _checkpoint(function, *args, **kwargs)
