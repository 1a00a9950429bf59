"""Wraps an exception raised by the function during the recompute into a RuntimeError of its own."""

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["exceptions.recompute-propagates"]
BREAKS = "the function's exception in the recompute reaches backward's caller as a different RuntimeError"


def _wrap_recompute_errors(call, function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except Exception as exc:
        if call == 0 or type(exc).__module__.startswith("torch"):  # torch's own early-stop signal passes
            raise
        raise RuntimeError(f"recomputation failed: {exc}") from exc


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, _wrap_recompute_errors), *args, **kwargs)
