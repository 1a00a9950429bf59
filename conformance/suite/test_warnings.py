"""The warning for an omitted use_reentrant, and its absence when it is passed (clauses warnings.*).

These tests call the implementation's module directly, without use_reentrant: the Checkpointer
(ckpt.checkpoint, ckpt.sequential) always passes it, which is exactly the case that must not warn.
Omitting use_reentrant selects the reentrant default, so the "not passed" clauses bind "reentrant".
"""

import re
import warnings

import pytest
import torch

from conformance.testing.assertions import assert_same_forward, assert_same_gradients
from conformance.fixtures.functions import sin_exp
from conformance.fixtures.inputs import leaf
from conformance.fixtures.models import seeded


def use_reentrant_notices(call):
    """Run call with every warning recorded (no deduplication: torch attributes its warning to one
    internal line, so the default filters would show it once per process); return the warnings and the
    exception that mention use_reentrant. The docs say an omitted use_reentrant "will raise an exception"
    in a future version, so an exception that says so is accepted in place of a warning."""
    raised = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except Exception as exc:  # noqa: BLE001  (the future behaviour the docs announce)
            raised = exc
    notices = [w for w in caught if issubclass(w.category, Warning) and _NAMES_IT.search(str(w.message))]
    if raised is not None and not _NAMES_IT.search(str(raised)):
        raise raised
    return notices, raised


# The parameter named as a word: "missing argument of _use_reentrant_default()" is a crash, not the notice.
_NAMES_IT = re.compile(r"\buse_reentrant\b")


def stack():
    """Three functions with fixed parameters (equal on every call)."""
    return seeded(lambda: [torch.nn.Tanh(), torch.nn.Linear(8, 8), torch.nn.Tanh()])


@pytest.mark.clause("warnings.checkpoint-use-reentrant-omitted")
def test_checkpoint_without_use_reentrant_warns(ckpt):
    # The one case that must bypass ckpt.checkpoint: call the implementation without use_reentrant.
    notices, raised = use_reentrant_notices(lambda: ckpt.impl.module.checkpoint(sin_exp, leaf()))
    assert notices or raised, "checkpoint without use_reentrant emitted no warning mentioning use_reentrant"


@pytest.mark.clause("warnings.sequential-use-reentrant-omitted")
def test_checkpoint_sequential_without_use_reentrant_warns(ckpt):
    # The one case that must bypass ckpt.sequential: call the implementation without use_reentrant.
    notices, raised = use_reentrant_notices(lambda: ckpt.impl.module.checkpoint_sequential(stack(), 2, leaf()))
    assert notices or raised, "checkpoint_sequential without use_reentrant emitted no warning mentioning use_reentrant"


@pytest.mark.clause("warnings.explicit-use-reentrant-silent")
def test_checkpoint_with_explicit_use_reentrant_does_not_warn_about_it(ckpt):
    notices, raised = use_reentrant_notices(lambda: ckpt.checkpoint(sin_exp, leaf()).sum().backward())
    assert raised is None, f"checkpoint with use_reentrant={ckpt.use_reentrant} raised {raised!r}"
    assert not notices, f"use_reentrant={ckpt.use_reentrant} was passed, yet: {[str(w.message)[:100] for w in notices]}"


@pytest.mark.clause("warnings.explicit-use-reentrant-silent")
def test_checkpoint_sequential_with_explicit_use_reentrant_does_not_warn_about_it(ckpt):
    if "checkpoint_sequential" not in ckpt.impl.capabilities.features:
        pytest.skip("the implementation does not claim checkpoint_sequential")
    notices, raised = use_reentrant_notices(lambda: ckpt.sequential(stack(), 2, leaf()).sum().backward())
    assert raised is None, f"checkpoint_sequential with use_reentrant={ckpt.use_reentrant} raised {raised!r}"
    assert not notices, f"use_reentrant={ckpt.use_reentrant} was passed, yet: {[str(w.message)[:100] for w in notices]}"


@pytest.mark.clause("warnings.no-warnings-of-its-own")
def test_checkpoint_of_a_silent_function_warns_nothing(ckpt):
    """Forward and backward through checkpoint, and through checkpoint_sequential where claimed, of functions
    that warn nothing, with use_reentrant passed and an input that requires grad: no warning at all."""
    calls = [lambda: ckpt.checkpoint(sin_exp, leaf()).sum().backward()]
    if "checkpoint_sequential" in ckpt.impl.capabilities.features:
        calls.append(lambda: ckpt.sequential(stack(), 2, leaf()).sum().backward())
    for call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert not caught, f"checkpoint warned: {[f'{w.category.__name__}: {str(w.message)[:100]}' for w in caught]}"


class GradModeLog:
    """sin -> exp, logging whether grad mode was enabled at each call (forward first, then recomputes)."""

    def __init__(self):
        self.grad_enabled = []

    def __call__(self, x):
        self.grad_enabled.append(torch.is_grad_enabled())
        return x.sin().exp()


# After the warning, the call runs: the documented default is use_reentrant=True ("Default: True",
# https://pytorch.org/docs/2.1/checkpoint.html), whose forward runs under torch.no_grad(); the value and the
# gradients are the function's.
@pytest.mark.clause("warnings.checkpoint-use-reentrant-omitted")
def test_checkpoint_without_use_reentrant_runs_the_reentrant_default(ckpt):
    fn, x, reference = GradModeLog(), leaf(), leaf()
    _, raised = use_reentrant_notices(lambda: ckpt.impl.module.checkpoint(fn, x).sum().backward())
    if raised is not None:
        return  # the announced future behaviour: nothing runs, nothing more to check
    sin_exp(reference).sum().backward()
    assert_same_gradients(x.grad, reference.grad, ["input gradient after the use_reentrant warning"])
    assert fn.grad_enabled[:1] == [False], (
        "with use_reentrant omitted the forward recorded a graph (grad mode on): the documented default "
        f"use_reentrant=True runs it under torch.no_grad(); grad mode per call: {fn.grad_enabled}")


@pytest.mark.clause("warnings.sequential-use-reentrant-omitted")
def test_checkpoint_sequential_without_use_reentrant_runs_the_reentrant_default(ckpt):
    first, layers = GradModeLog(), stack()
    x, reference = leaf(), leaf()
    result = []
    _, raised = use_reentrant_notices(
        lambda: result.append(ckpt.impl.module.checkpoint_sequential([first, *layers], 2, x)))
    if raised is not None:
        return  # the announced future behaviour
    expected = stack_run(layers, sin_exp(reference))
    assert_same_forward(result[0], expected)
    result[0].sum().backward()
    expected.sum().backward()
    assert_same_gradients(x.grad, reference.grad, ["input gradient after the use_reentrant warning"])
    assert first.grad_enabled[:1] == [False], (
        "with use_reentrant omitted the first segment's forward recorded a graph: the documented default "
        f"use_reentrant=True runs it under torch.no_grad(); grad mode per call: {first.grad_enabled}")


def stack_run(layers, x):
    for layer in layers:
        x = layer(x)
    return x
