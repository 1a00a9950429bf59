"""General API: forward value, gradients, keywords (clauses api.*)."""

import pytest
import torch

from conformance.testing.assertions import (
    assert_same_forward,
    assert_same_gradients,
    assert_same_output,
    grads_of,
    parameter_grads,
)
from conformance.fixtures.functions import (
    COMPANIONS,
    NON_TENSOR_ITEMS,
    STRUCTURES,
    TOP_LEVEL_STRUCTURES,
    VIEWS,
    mul_add,
    returning_view,
    sin_exp,
    two_outputs,
    weighted_loss,
    with_companion,
    with_items,
)
from conformance.fixtures.inputs import (
    ALIASINGS,
    COMPLEX_DTYPES,
    DEGENERATE_SHAPES,
    DTYPES,
    INTEGRALS,
    LAYOUTS,
    OPTIONS,
    POSITIONS,
    aliased,
    degenerate,
    integral_tensor,
    laid_out,
    leaf,
    options_for,
    placed,
    twin_leaves,
)
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
    assert_output_is_the_functions(ckpt, _mixes, lambda: aliased(aliasing))


def assert_output_is_the_functions(ckpt, function, case):
    """case() builds (args, leaves): checkpointing function on args returns what function(*args) does."""
    args, _ = case()
    assert_same_output(ckpt.checkpoint(function, *args), function(*args))


def assert_gradients_are_the_uncheckpointed_ones(ckpt, function, case, what):
    """case() builds (args, leaves), equal on every call: one twin is checkpointed, the other run plainly,
    and the leaves under the arguments get the same gradients of weighted_loss."""
    (args, leaves), (reference_args, reference_leaves) = case(), case()
    weighted_loss(ckpt.checkpoint(function, *args)).backward()
    weighted_loss(function(*reference_args)).backward()
    names = [f"leaf {i} ({what})" for i in range(len(leaves))]
    assert_same_gradients(grads_of(leaves), grads_of(reference_leaves), names)


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("aliasing", ALIASINGS)
def test_gradients_are_the_uncheckpointed_ones_whatever_the_arguments_alias(ckpt, aliasing):
    assert_gradients_are_the_uncheckpointed_ones(ckpt, _mixes, lambda: aliased(aliasing), aliasing)


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


# ---- argument kinds and layouts: what "*args" may hold besides floating tensors of one layout ------

def _indexed(*args):
    """Two floating arguments read through an integral one, wherever it sits: gathered by int64 indices,
    selected by a bool mask. A function that misplaces or alters the integral argument changes its value."""
    (x, y), (index,) = [a for a in args if a.is_floating_point()], [a for a in args if not a.is_floating_point()]
    chosen = torch.where(index, x, y) if index.dtype == torch.bool else x.gather(-1, index)
    return (chosen * y).sin() + x.exp() * 0.5


def _leaves_as_args(*leaves):
    """The case of arguments that are the leaves themselves."""
    return leaves, list(leaves)


def _integral_case(kind, position):
    x, y = leaf(seed=1), leaf(seed=2)
    return placed(integral_tensor(kind), position, x, y), [x, y]


@pytest.mark.clause("api.forward-value")
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("integral", INTEGRALS)
def test_output_is_the_functions_with_an_integral_tensor_among_the_arguments(ckpt, integral, position):
    assert_output_is_the_functions(ckpt, _indexed, lambda: _integral_case(integral, position))


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("integral", INTEGRALS)
def test_gradients_are_the_uncheckpointed_ones_with_an_integral_tensor_among_the_arguments(ckpt, integral, position):
    assert_gradients_are_the_uncheckpointed_ones(ckpt, _indexed, lambda: _integral_case(integral, position),
                                                 f"{integral} tensor {position}")


def _complex_and_real_outputs(z, x):
    """A complex argument and a real one; a complex output and a real one."""
    return (z * x).sin(), z.abs() * x


def _complex_case(dtype):
    complex_dtype = COMPLEX_DTYPES[dtype]
    return _leaves_as_args(leaf(seed=1, dtype=complex_dtype), leaf(seed=2, dtype=complex_dtype.to_real()))


@pytest.mark.clause("api.forward-value")
@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
def test_output_with_complex_arguments_and_outputs_is_the_functions(ckpt, dtype):
    assert_output_is_the_functions(ckpt, _complex_and_real_outputs, lambda: _complex_case(dtype))


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
def test_gradients_of_complex_arguments_equal_the_uncheckpointed_run(ckpt, dtype):
    assert_gradients_are_the_uncheckpointed_ones(ckpt, _complex_and_real_outputs, lambda: _complex_case(dtype), dtype)


def _keeps_shape(t, x):
    """An output of t's degenerate shape, and a 0-d output that also reads a BATCH x WIDTH argument."""
    return t.exp() * 2, (x.sin() + t.sum()).tanh().sum()


def _degenerate_case(shape):
    return _leaves_as_args(degenerate(shape), leaf(seed=2))


@pytest.mark.clause("api.forward-value")
@pytest.mark.parametrize("shape", DEGENERATE_SHAPES)
def test_output_with_0d_and_empty_tensors_is_the_functions(ckpt, shape):
    assert_output_is_the_functions(ckpt, _keeps_shape, lambda: _degenerate_case(shape))


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("shape", DEGENERATE_SHAPES)
def test_gradients_of_0d_and_empty_tensors_equal_the_uncheckpointed_run(ckpt, shape):
    # An empty leaf's gradient is an empty tensor, not None: backward reached it.
    assert_gradients_are_the_uncheckpointed_ones(ckpt, _keeps_shape, lambda: _degenerate_case(shape), shape)


def _laid_out_case(layout):
    x, under = laid_out(layout)
    return (x,), [under]


@pytest.mark.clause("api.forward-value")
@pytest.mark.parametrize("layout", LAYOUTS)
def test_output_with_a_non_contiguous_argument_is_the_functions(ckpt, layout):
    assert_output_is_the_functions(ckpt, sin_exp, lambda: _laid_out_case(layout))


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("layout", LAYOUTS)
def test_gradients_of_a_non_contiguous_argument_equal_the_uncheckpointed_run(ckpt, layout):
    assert_gradients_are_the_uncheckpointed_ones(ckpt, sin_exp, lambda: _laid_out_case(layout), layout)


SHARINGS = ("tied-weight", "same-module", "existing-grad")


def _step(sharing, layer, x, region):
    """A backward through a Linear layer used inside the region (region(function, input): checkpointed or
    run plainly) whose weight also gets a gradient elsewhere, as named."""
    def inside(t):
        return layer(t).tanh()

    if sharing == "tied-weight":  # the weight again as an output projection outside (tied embeddings)
        output = torch.nn.functional.linear(region(inside, x), layer.weight)
    elif sharing == "same-module":  # the module itself called before and after the region too
        output = layer(region(inside, layer(x)))
    else:  # two micro-batches: the second backward accumulates into the .grad the first left
        weighted_loss(region(inside, x)).backward()
        output = region(inside, x.flip(0))
    weighted_loss(output).backward()


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("sharing", SHARINGS)
def test_gradients_of_a_parameter_also_used_outside_the_region_equal_the_uncheckpointed_run(ckpt, sharing):
    (model, reference), (x, reference_x) = twins(mlp(depth=1)), twin_leaves()
    _step(sharing, model[0], x, ckpt.checkpoint)
    _step(sharing, reference[0], reference_x, lambda function, t: function(t))
    assert_same_gradients([x.grad, *parameter_grads(model)], [reference_x.grad, *parameter_grads(reference)],
                          [f"{name} ({sharing})" for name in ("input", "weight", "bias")])


# ---- output kinds: what "Output of running function" may hold ------------------------------------

def _pair():
    return _leaves_as_args(leaf(seed=1), leaf(seed=2))


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("item", NON_TENSOR_ITEMS)
def test_gradients_through_tensors_beside_non_tensor_outputs_equal_the_uncheckpointed_run(ckpt, item):
    assert_gradients_are_the_uncheckpointed_ones(ckpt, with_items(NON_TENSOR_ITEMS[item]), _pair, f"{item} outputs")


@pytest.mark.clause("api.forward-value")
@pytest.mark.parametrize("companion", COMPANIONS)
def test_integral_outputs_beside_differentiable_ones_are_the_functions(ckpt, companion):
    assert_output_is_the_functions(ckpt, with_companion(companion), _pair)


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("companion", COMPANIONS)
def test_gradients_through_outputs_beside_integral_ones_equal_the_uncheckpointed_run(ckpt, companion):
    assert_gradients_are_the_uncheckpointed_ones(ckpt, with_companion(companion), _pair, f"{companion} output first")


@pytest.mark.clause("api.forward-value")
@pytest.mark.parametrize("view", VIEWS)
def test_output_that_views_an_argument_is_the_functions(ckpt, view):
    assert_output_is_the_functions(ckpt, returning_view(view), _pair)


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("view", VIEWS)
def test_gradients_through_an_output_that_views_an_argument_equal_the_uncheckpointed_run(ckpt, view):
    assert_gradients_are_the_uncheckpointed_ones(ckpt, returning_view(view), _pair, f"{view} of an argument returned")


# ---- torch's test_save_on_cpu_and_checkpoint (test_autograd.py): docs/UPSTREAM_TESTS.md ----

SAVED_TENSOR_HOOKS = ("around-the-checkpoint", "inside-the-function")


def _powers(h):
    return h.pow(2).pow(2)


def _powers_saved_on_cpu(h):
    with torch.autograd.graph.save_on_cpu():
        h = _powers(h)
    return h.pow(2)


@pytest.mark.clause("api.same-gradients")
@pytest.mark.parametrize("hooks", SAVED_TENSOR_HOOKS)
def test_gradients_with_saved_tensor_hooks_around_or_inside_the_region_equal_the_uncheckpointed_run(ckpt, hooks):
    """torch.autograd.graph.save_on_cpu (a saved_tensors_hooks) around the checkpoint call, or entered by the
    function itself: the caller's hooks and checkpoint's own saving must compose."""

    def run(call, x):
        h = x.pow(2)
        if hooks == "around-the-checkpoint":
            with torch.autograd.graph.save_on_cpu():
                out = call(_powers, h).pow(2)
        else:
            out = call(_powers_saved_on_cpu, h)
        out.sum().backward()

    x, reference_x = twin_leaves()
    run(ckpt.checkpoint, x)
    run(lambda function, h: function(h), reference_x)
    assert_same_gradients(x.grad, reference_x.grad, [f"input gradient (save_on_cpu {hooks})"])
