"""context_fn (clauses contextfn.*)."""

import contextlib

import pytest

from conformance.assertions import assert_raises, assert_same_gradients
from fixtures.functions import sin_exp
from fixtures.inputs import leaf, twin_leaves
from fixtures.probes import RecordingContext


@pytest.mark.clause("contextfn.forward-and-recompute")
def test_forward_runs_under_first_recompute_under_second(ckpt):
    log = []

    def fn(x):
        log.append(f"fn under {RecordingContext.active.name if RecordingContext.active else 'nothing'}")
        return sin_exp(x)  # saves tensors, so backward needs a recompute

    def context_fn():
        return RecordingContext("first", log), RecordingContext("second", log)

    x, reference = twin_leaves()
    out = ckpt.checkpoint(fn, x, context_fn=context_fn)
    assert log == ["enter first", "fn under first", "exit first"], f"forward: {log}"
    out.sum().backward()
    recompute = log[3:]
    assert recompute == ["enter second", "fn under second", "exit second"], f"recompute: {recompute}"
    sin_exp(reference).sum().backward()
    assert_same_gradients(x.grad, reference.grad, ["input gradient"])


@pytest.mark.clause("contextfn.reentrant-rejects")
def test_reentrant_rejects_context_fn(ckpt):
    def context_fn():
        return contextlib.nullcontext(), contextlib.nullcontext()

    with assert_raises(Exception, "an error for a non-default context_fn with use_reentrant=True"):
        ckpt.checkpoint(sin_exp, leaf(), context_fn=context_fn).sum().backward()
