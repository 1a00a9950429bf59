"""Non-tensor arguments and outputs pass through checkpoint unchanged (clauses nontensor.*)."""

import pytest

from conformance.testing.assertions import assert_same_forward, assert_same_gradients, assert_same_output
from conformance.fixtures.functions import NON_TENSOR_ITEMS, with_items
from conformance.fixtures.inputs import POSITIONS, placed, twin_leaves


def offset(t):
    return t + 1


NON_TENSOR_ARGS = (None, 3, 0.5, "mode", True, offset, len)


def recording(calls):
    """A function of (x, *extras) that records the extras it receives on every call."""

    def fn(x, none, count, factor, mode, flag, activation, builtin):
        calls.append((none, count, factor, mode, flag, activation, builtin))
        return activation(x.sin() * count * factor).exp()

    return fn


@pytest.mark.clause("nontensor.arguments-pass-through")
def test_non_tensor_arguments_reach_forward_and_recompute_unchanged(ckpt):
    x, x_ref = twin_leaves()
    calls = []
    out = ckpt.checkpoint(recording(calls), x, *NON_TENSOR_ARGS)
    try:
        out.sum().backward()
    finally:  # what the recompute received explains a failing backward best: check it first
        for call, received in enumerate(calls):
            for position, (got, passed) in enumerate(zip(received, NON_TENSOR_ARGS), start=1):
                assert got is passed, (
                    f"call {call} of the function got {got!r} as argument {position}, not the object passed ({passed!r})")
    reference = recording([])(x_ref, *NON_TENSOR_ARGS)
    reference.sum().backward()
    assert_same_forward(out, reference)
    assert_same_gradients(x.grad, x_ref.grad, ["x.grad"])


class Settings:
    """An object of the caller's own class (a config handed to a block)."""

    def __init__(self, scale):
        self.scale = scale


NON_TENSORS = {"None": None, "bool": True, "int": 3, "float": 0.5, "str": "mode", "object": Settings(1.5)}


def as_number(value) -> float:
    """What the function below makes of each kind of non-tensor argument: a changed one changes the output."""
    if value is None:
        return 0.25
    if isinstance(value, Settings):
        return value.scale
    if isinstance(value, str):
        return len(value) / 4
    return -float(value) if isinstance(value, bool) else float(value)


def reading_argument(index, calls):
    """A function of two tensors and a non-tensor at args[index] that records, on every call, what it got there."""

    def fn(*args):
        calls.append(args[index])
        x, y = (a for i, a in enumerate(args) if i != index)
        return (x * y).sin() * as_number(args[index]) + x.exp()

    return fn


@pytest.mark.clause("nontensor.arguments-pass-through")
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("non_tensor", NON_TENSORS)
def test_a_non_tensor_argument_of_any_kind_reaches_every_call_at_any_position(ckpt, non_tensor, position):
    passed, index = NON_TENSORS[non_tensor], POSITIONS.index(position)
    (x, x_ref), (y, y_ref) = twin_leaves(seed=1), twin_leaves(seed=2)
    calls = []
    out = ckpt.checkpoint(reading_argument(index, calls), *placed(passed, position, x, y))
    try:
        out.sum().backward()
    finally:  # what the recompute received explains a failing backward best: check it first
        for call, received in enumerate(calls):
            assert received is passed, (
                f"call {call} of the function got {received!r} as argument {index}, not the object passed ({passed!r})")
    reference = reading_argument(index, [])(*placed(passed, position, x_ref, y_ref))
    reference.sum().backward()
    assert_same_forward(out, reference)
    assert_same_gradients([x.grad, y.grad], [x_ref.grad, y_ref.grad], ["x.grad", "y.grad"])


def mixed_outputs(x):
    return x.sin().exp(), 7, "label", None, False, (2.5, ("nested", x.cos()))


@pytest.mark.clause("nontensor.outputs-unchanged")
def test_non_tensor_outputs_come_back_unchanged(ckpt):
    x, x_ref = twin_leaves()
    out = ckpt.checkpoint(mixed_outputs, x)
    expected = mixed_outputs(x_ref)
    assert type(out) is tuple and len(out) == len(expected), f"output structure changed: {out!r}"
    for position in (1, 2, 3, 4):
        assert type(out[position]) is type(expected[position]) and out[position] == expected[position], (
            f"output {position}: got {out[position]!r}, the function returned {expected[position]!r}")
    assert_same_forward(out[0], expected[0])
    (out[0].sum()).backward()
    (expected[0].sum()).backward()
    assert_same_gradients(x.grad, x_ref.grad, ["x.grad"])


@pytest.mark.clause("nontensor.outputs-unchanged")
def test_nested_non_tensor_output_structure_is_kept(ckpt):
    x, x_ref = twin_leaves()
    out = ckpt.checkpoint(mixed_outputs, x)
    expected = mixed_outputs(x_ref)
    last, last_expected = out[5], expected[5]
    assert type(last) is tuple and type(last[1]) is tuple, f"the nested tuple output changed structure: {last!r}"
    assert last[0] == last_expected[0] and last[1][0] == last_expected[1][0], f"nested values changed: {last!r}"
    assert_same_forward(last[1][1], last_expected[1][1], "nested tensor output")


@pytest.mark.clause("nontensor.outputs-unchanged")
@pytest.mark.parametrize("value", [5, "text", None, True], ids=["int", "str", "None", "bool"])
def test_function_returning_only_a_python_value_returns_it(ckpt, value):
    x, _ = twin_leaves()
    out = ckpt.checkpoint(lambda t: value, x)
    assert type(out) is type(value) and out == value, f"checkpoint returned {out!r}, the function returned {value!r}"


@pytest.mark.clause("nontensor.outputs-unchanged")
@pytest.mark.parametrize("item", NON_TENSOR_ITEMS)
def test_non_tensor_items_before_and_between_tensor_outputs_come_back_unchanged(ckpt, item):
    function = with_items(NON_TENSOR_ITEMS[item])
    (x, _), (y, _) = twin_leaves(seed=1), twin_leaves(seed=2)
    assert_same_output(ckpt.checkpoint(function, x, y), function(x, y))


# ---- torch's test_checkpoint_no_tensors (test_utils.py): docs/UPSTREAM_TESTS.md ----

@pytest.mark.clause("nontensor.arguments-pass-through")
def test_function_of_python_values_only_receives_them_and_returns_its_result(ckpt):
    def region(a, b, scale, label):
        return (a + b * scale) * scale, None, label, scale

    args = (0.5, 0.25, 3, "label")  # not one tensor among the arguments
    assert_same_output(ckpt.checkpoint(region, *args), region(*args))
