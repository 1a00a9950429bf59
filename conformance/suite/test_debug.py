"""Debug mode (clauses debug.*).

An error is provoked with the determinism check (a recompute that saves a tensor of another shape);
with debug on, its message must name the operators the function ran in the forward (flip, sinh, atan)
and in the recomputation (roll, sinh, atan), names no ordinary error prose contains as words.
"""

import contextlib
import logging
import re

import pytest
import torch

from conformance.testing.assertions import ANY_ERROR, INVALID_ARGUMENT, assert_rejected, assert_same_gradients, backward_of_sum
from conformance.fixtures.functions import TracedChange
from conformance.fixtures.inputs import leaf


@pytest.fixture(autouse=True)
def tolerate_malformed_log_records(monkeypatch):
    """The clause is about the error message, not logs. An implementation's debug mode may log too:
    torch 2.13 logs each op with malformed format arguments, which pytest >= 9.2's log capture turns
    into a test error unless logging is told to ignore handler errors."""
    monkeypatch.setattr(logging, "raiseExceptions", False)


def checkpoint_error_message(ckpt, **kwargs):
    fn = TracedChange()
    out = ckpt.checkpoint(fn, leaf(), **kwargs)
    fn.changed = True
    try:
        out.sum().backward()
    except ckpt.CheckpointError as error:
        return str(error)
    raise AssertionError("no CheckpointError for a recompute that saves a tensor of another shape")


def named(op, message):
    return re.search(rf"\b{op}\b", message) is not None


def assert_traces_both_runs(message, why):
    """The trace names the operators of the original forward (flip) and of the recomputation (roll)."""
    expected = {"the original forward": [TracedChange.FORWARD_ONLY, *TracedChange.BOTH],
                "the recomputation": [TracedChange.RECOMPUTE_ONLY, *TracedChange.BOTH]}
    missing = {run: [op for op in ops if not named(op, message)] for run, ops in expected.items()}
    missing = {run: ops for run, ops in missing.items() if ops}
    assert not missing, f"{why}, but the error message does not name the operators of {missing}: {message[:300]!r}..."


@pytest.mark.clause("debug.trace-in-errors")
def test_debug_error_names_the_operators_of_the_forward_and_the_recompute(ckpt):
    message = checkpoint_error_message(ckpt, debug=True)
    assert_traces_both_runs(message, "debug=True includes a trace of the forward's and the recomputation's operators")


@pytest.mark.clause("debug.global-override")
@pytest.mark.parametrize("debug", [True, False])
@pytest.mark.parametrize("debug_enabled", [True, False, None])
def test_global_debug_setting_overrides_the_debug_argument_both_ways(ckpt, debug_enabled, debug):
    """True and False override debug=; None defers to it, even inside an outer setting of the opposite value."""
    untraced = checkpoint_error_message(ckpt, debug=False)  # what this implementation says without a trace
    with ckpt.set_checkpoint_debug_enabled(not debug if debug_enabled is None else debug_enabled):
        with ckpt.set_checkpoint_debug_enabled(debug_enabled):
            message = checkpoint_error_message(ckpt, debug=debug)
    setting = f"set_checkpoint_debug_enabled({debug_enabled}) with debug={debug}"
    if (debug if debug_enabled is None else debug_enabled):
        assert_traces_both_runs(message, f"{setting} turns the trace on")
    else:
        extra = [op for op in (TracedChange.FORWARD_ONLY, TracedChange.RECOMPUTE_ONLY)
                 if named(op, message) and not named(op, untraced)]
        assert not extra, f"{setting} turns the trace off, but the error message names {extra}: {message[:300]!r}..."


@pytest.mark.clause("debug.reentrant-rejects")
def test_reentrant_rejects_debug(ckpt):
    fn, x = TracedChange(), leaf()
    assert_rejected(ANY_ERROR, "an error for debug=True with use_reentrant=True",
                    ckpt.checkpoint, fn, x, debug=True, then=backward_of_sum)


@pytest.mark.clause("debug.rejects-context-fn")
def test_debug_with_a_context_fn_is_rejected(ckpt):
    def context_fn():
        return contextlib.nullcontext(), contextlib.nullcontext()

    fn, x = TracedChange(), leaf()
    assert_rejected(INVALID_ARGUMENT, "an error for debug=True together with a non-default context_fn",
                    ckpt.checkpoint, fn, x, debug=True, context_fn=context_fn, then=backward_of_sum)


@pytest.mark.clause("debug.trace-in-errors")
@pytest.mark.parametrize("second", ["backward with retain_graph", "double backward"])
def test_debug_adds_nothing_to_a_region_recomputed_twice(ckpt, second):
    """debug=True only adds information to errors: a region recomputed a second time (a second backward through
    a retained graph, a gradient of a gradient) gives the gradients the un-checkpointed run gives."""
    def region(x):
        return torch.tanh(x) * x

    def gradients(function):
        x = leaf(seed=3)
        out = function(x)
        if second == "double backward":
            g, = torch.autograd.grad(out.sum(), x, create_graph=True)
            g.sum().backward()
        else:
            out.sum().backward(retain_graph=True)
            out.sum().backward()
        return [x.grad]

    expected = gradients(region)
    assert_same_gradients(gradients(lambda x: ckpt.checkpoint(region, x, debug=True)), expected, ["x.grad"])
