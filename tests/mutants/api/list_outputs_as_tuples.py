"""Non-reentrant: a function that returns a list (or a dict) gets a tuple of its values back."""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.forward-value"]
BREAKS = "list and dict outputs come back as tuples"


def checkpoint(function, *args, **kwargs):
    out = _checkpoint(function, *args, **kwargs)
    if isinstance(out, list):
        return tuple(out)
    if isinstance(out, dict):
        return tuple(out.values())
    return out
