"""Reentrant: silently drops keyword arguments meant for the function instead of rejecting them."""

from tests.mutants._support.call_wrappers import OWN_KEYWORDS
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["kwargs.reentrant-rejected"]
BREAKS = "ignores keyword arguments for the function under use_reentrant=True, with no error"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant:
        kwargs = {k: v for k, v in kwargs.items() if k in OWN_KEYWORDS}
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
