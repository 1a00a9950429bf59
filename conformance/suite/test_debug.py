"""Debug mode (clauses debug.*).

An error is provoked with the determinism check (a recompute that saves a tensor of another shape);
with debug on, its message must name the operators the function ran: sinh and atan, names no
ordinary error prose contains.
"""

import contextlib
import logging

import pytest

from conformance.assertions import INVALID_ARGUMENT, assert_rejected
from fixtures.functions import ChangesBetweenPasses
from fixtures.inputs import leaf

OPERATORS = ("sinh", "atan")


@pytest.fixture(autouse=True)
def tolerate_malformed_log_records(monkeypatch):
    """The clause is about the error message, not logs. An implementation's debug mode may log too:
    torch 2.13 logs each op with malformed format arguments, which pytest >= 9.2's log capture turns
    into a test error unless logging is told to ignore handler errors."""
    monkeypatch.setattr(logging, "raiseExceptions", False)


def checkpoint_error_message(ckpt, **kwargs):
    fn = ChangesBetweenPasses("shape")
    out = ckpt.checkpoint(fn, leaf(), **kwargs)
    fn.changed = True
    try:
        out.sum().backward()
    except ckpt.CheckpointError as error:
        return str(error)
    raise AssertionError("no CheckpointError for a recompute that saves a tensor of another shape")


def assert_names_operators(message, why):
    missing = [op for op in OPERATORS if op not in message]
    assert not missing, f"{why}, but the error message does not name {missing}: {message[:300]!r}..."


@pytest.mark.clause("debug.trace-in-errors")
def test_debug_error_names_the_operators(ckpt):
    message = checkpoint_error_message(ckpt, debug=True)
    assert_names_operators(message, "debug=True includes a trace of the operators")


@pytest.mark.clause("debug.global-override")
def test_global_debug_overrides_debug_false(ckpt):
    with ckpt.set_checkpoint_debug_enabled(True):
        message = checkpoint_error_message(ckpt, debug=False)
    assert_names_operators(message, "set_checkpoint_debug_enabled(True) overrides debug=False")


@pytest.mark.clause("debug.reentrant-rejects")
def test_reentrant_rejects_debug(ckpt):
    x = leaf()
    assert_rejected(INVALID_ARGUMENT, "an error for debug=True with use_reentrant=True",
                    lambda: ckpt.checkpoint(ChangesBetweenPasses("shape"), x, debug=True), lambda out: out.sum().backward())


@pytest.mark.clause("debug.rejects-context-fn")
def test_debug_with_a_context_fn_is_rejected(ckpt):
    def context_fn():
        return contextlib.nullcontext(), contextlib.nullcontext()

    x = leaf()
    assert_rejected(INVALID_ARGUMENT, "an error for debug=True together with a non-default context_fn",
                    lambda: ckpt.checkpoint(ChangesBetweenPasses("shape"), x, debug=True, context_fn=context_fn),
                    lambda out: out.sum().backward())
