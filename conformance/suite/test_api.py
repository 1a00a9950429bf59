"""General API: forward value, gradients, keywords (clauses api.*)."""

import pytest

from conformance.assertions import (
    assert_same_forward,
    assert_same_gradients,
    assert_same_output,
    grads_of,
    parameter_grads,
)
from conformance.fixtures.functions import STRUCTURES, TOP_LEVEL_STRUCTURES, mul_add, sin_exp, two_outputs, weighted_loss
from conformance.fixtures.inputs import ALIASINGS, DTYPES, OPTIONS, aliased, leaf, options_for, twin_leaves
from conformance.fixtures.models import mlp, twins


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


# ---- the input space of "function" and "*args": dtypes, aliasing, output structures, options ------

def _mixes(x, y):
    """Reads both arguments differently, so an argument dropped, swapped or aliased wrongly is seen."""
    return (x * y).sin() + x.exp() * 0.5


def _dtype_case(dtype):
    """A Linear/Tanh model and an input in dtype (built twice: equal twins)."""
    return mlp().to(DTYPES[dtype]), leaf(dtype=DTYPES[dtype])


def _structure_case(structure):
    return STRUCTURES[structure], leaf(seed=1), leaf(seed=2)


@pytest.mark.clause("api.forward-value")
@pytest.mark.parametrize("dtype", DTYPES)
def test_output_in_every_floating_dtype_is_the_functions(ckpt, dtype):
    model, x = _dtype_case(dtype)
    assert_same_output(ckpt.checkpoint(model, x), model(x))


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients_in_every_floating_dtype_equal_the_uncheckpointed_run(ckpt, dtype):
    (model, x), (reference, reference_x) = _dtype_case(dtype), _dtype_case(dtype)
    weighted_loss(ckpt.checkpoint(model, x)).backward()
    weighted_loss(reference(reference_x)).backward()
    assert_same_gradients([x.grad, *parameter_grads(model)], [reference_x.grad, *parameter_grads(reference)],
                          ["input"] + [n for n, _ in model.named_parameters()])


@pytest.mark.clause("api.forward-value")
@pytest.mark.parametrize("aliasing", ALIASINGS)
def test_output_is_the_functions_whatever_the_arguments_alias(ckpt, aliasing):
    args, _ = aliased(aliasing)
    assert_same_output(ckpt.checkpoint(_mixes, *args), _mixes(*args))


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("aliasing", ALIASINGS)
def test_gradients_are_the_uncheckpointed_ones_whatever_the_arguments_alias(ckpt, aliasing):
    (args, leaves), (reference_args, reference_leaves) = aliased(aliasing), aliased(aliasing)
    weighted_loss(ckpt.checkpoint(_mixes, *args)).backward()
    weighted_loss(_mixes(*reference_args)).backward()
    assert_same_gradients(grads_of(leaves), grads_of(reference_leaves), [f"leaf {i} ({aliasing})" for i in range(len(leaves))])


@pytest.mark.clause("api.forward-value")
@pytest.mark.parametrize("structure", STRUCTURES)
def test_output_has_the_functions_type_and_structure(ckpt, structure):
    function, x, y = _structure_case(structure)
    assert_same_output(ckpt.checkpoint(function, x, y), function(x, y))


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("structure", STRUCTURES)
def test_gradients_through_every_output_structure_equal_the_uncheckpointed_run(ckpt, structure):
    if ckpt.use_reentrant and structure not in TOP_LEVEL_STRUCTURES:
        pytest.skip("the reentrant variant's outputs are a tensor or a tuple of tensors; tensors nested in other "
                    "structures do not take part in its autograd (the non-reentrant variant is checked)")
    (function, x, y), (_, reference_x, reference_y) = _structure_case(structure), _structure_case(structure)
    weighted_loss(ckpt.checkpoint(function, x, y)).backward()
    weighted_loss(function(reference_x, reference_y)).backward()
    assert_same_gradients([x.grad, y.grad], [reference_x.grad, reference_y.grad], ["x", "y"])


@pytest.mark.clause("api.forward-value")
@pytest.mark.parametrize("options", OPTIONS)
def test_output_is_the_functions_with_options_omitted_or_explicitly_default(ckpt, options):
    x, y = leaf(seed=1), leaf(seed=2)
    assert_same_output(ckpt.checkpoint(two_outputs, x, y, **options_for(ckpt, options)), two_outputs(x, y))


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("options", OPTIONS)
def test_gradients_are_the_uncheckpointed_ones_with_options_omitted_or_explicitly_default(ckpt, options):
    model, reference = twins(mlp())
    (x, reference_x), (y, reference_y) = twin_leaves(seed=1), twin_leaves(seed=2)
    weighted_loss(ckpt.checkpoint(lambda a, b: model(_mixes(a, b)), x, y, **options_for(ckpt, options))).backward()
    weighted_loss(reference(_mixes(reference_x, reference_y))).backward()
    assert_same_gradients([x.grad, y.grad, *parameter_grads(model)], [reference_x.grad, reference_y.grad, *parameter_grads(reference)])
