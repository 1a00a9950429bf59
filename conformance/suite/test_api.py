"""General API: forward value, gradients, keywords (clauses api.*)."""

import pytest

from conformance.assertions import assert_same_forward, assert_same_gradients, grads_of, parameter_grads
from fixtures.functions import mul_add, sin_exp, two_outputs
from fixtures.inputs import leaf, twin_leaves
from fixtures.models import mlp, twins


def _closes_over(weight):
    """A function that uses a tensor it was not passed (a closed-over parameter)."""
    return lambda x: (x * weight).tanh()


# name -> a builder of (function, its inputs); two calls build equal, independent twins.
FUNCTIONS = {
    "one-input": lambda: (sin_exp, [leaf()]),
    "two-inputs": lambda: (mul_add, [leaf(seed=1), leaf(seed=2)]),
    "one-of-two-inputs-requires-grad": lambda: (mul_add, [leaf(seed=1), leaf(seed=2, requires_grad=False)]),
    "two-outputs": lambda: (two_outputs, [leaf(seed=1), leaf(seed=2)]),
    "module": lambda: (mlp(), [leaf()]),
}


@pytest.mark.clause("api.forward-value")
@pytest.mark.parametrize("name", FUNCTIONS)
def test_output_is_the_output_of_running_function_on_args(ckpt, name):
    function, inputs = FUNCTIONS[name]()
    actual = ckpt.checkpoint(function, *inputs)
    expected = function(*inputs)
    assert isinstance(actual, type(expected)), (
        f"function returned a {type(expected).__name__}, checkpoint a {type(actual).__name__}")
    assert_same_forward(actual, expected)


def _loss(output):
    outputs = output if isinstance(output, tuple) else (output,)
    return sum((o * (i + 1)).sum() for i, o in enumerate(outputs))  # weights tell outputs apart


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("name", FUNCTIONS)
def test_input_gradients_equal_those_of_the_uncheckpointed_run(ckpt, name):
    function, inputs = FUNCTIONS[name]()
    reference, reference_inputs = FUNCTIONS[name]()  # equal twins, fresh leaves
    _loss(ckpt.checkpoint(function, *inputs)).backward()
    _loss(reference(*reference_inputs)).backward()
    assert_same_gradients(grads_of(inputs), grads_of(reference_inputs), [f"input {i}" for i in range(len(inputs))])


@pytest.mark.clause("api.same-gradients")
def test_gradients_of_parameters_used_inside_equal_those_of_the_uncheckpointed_run(ckpt):
    model, reference = twins(mlp(depth=3))
    weight, reference_weight = twin_leaves(seed=3)  # a bare tensor closed over, not a module parameter
    x, reference_x = twin_leaves()
    _loss(ckpt.checkpoint(lambda t: _closes_over(weight)(model(t)), x)).backward()
    _loss(_closes_over(reference_weight)(reference(reference_x))).backward()
    names = ["input", "closed-over tensor"] + [n for n, _ in model.named_parameters()]
    assert_same_gradients([x.grad, weight.grad, *parameter_grads(model)],
                          [reference_x.grad, reference_weight.grad, *parameter_grads(reference)], names)


@pytest.mark.clause("api.keywords")
@pytest.mark.parametrize("preserve_rng_state", [True, False])
@pytest.mark.parametrize("entry", ["checkpoint", "checkpoint_sequential"])
def test_use_reentrant_and_preserve_rng_state_are_accepted_as_keywords(ckpt, entry, preserve_rng_state):
    model = mlp(depth=2)
    x = leaf()
    if entry == "checkpoint":
        actual = ckpt.checkpoint(model, x, preserve_rng_state=preserve_rng_state)
    else:
        actual = ckpt.sequential(list(model.children()), 2, x, preserve_rng_state=preserve_rng_state)
    assert_same_forward(actual, model(x))
