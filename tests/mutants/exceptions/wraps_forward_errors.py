"""Wraps an exception raised by the function in the forward into a RuntimeError of its own."""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["exceptions.forward-propagates"]
BREAKS = "the function's exception reaches the caller as a different RuntimeError"


def checkpoint(function, *args, **kwargs):
    try:
        return _checkpoint(function, *args, **kwargs)
    except Exception as exc:
        raise RuntimeError(f"checkpointed function failed: {exc}") from exc
