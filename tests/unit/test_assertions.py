"""The assertion helpers fail for the right reasons: a rejection is satisfied only by the named type (where the
docs name none, by any exception but a crash); an output is compared leaf by leaf, whatever the leaves are."""

import pytest
import torch

from conformance.data.capabilities import Unsupported
from conformance.testing.assertions import ANY_ERROR, INVALID_ARGUMENT, assert_raises, assert_rejected, assert_same_forward


def raise_(exception):
    raise exception


def test_assert_raises_accepts_the_named_type_and_its_subclasses():
    with assert_raises(RuntimeError, "an error"):
        raise_(NotImplementedError("a RuntimeError subclass"))


@pytest.mark.parametrize("wrong", [AttributeError("crash"), NameError("crash"), KeyError("crash")])
def test_another_exception_is_reported_as_unexpected(wrong):
    with pytest.raises(AssertionError, match=rf"unexpected exception {type(wrong).__name__}.*expected .*TypeError or ValueError"):
        with assert_raises(INVALID_ARGUMENT, "an error for a bad keyword"):
            raise_(wrong)


class OwnError(Exception):
    """An implementation's own error class: no TypeError, ValueError or RuntimeError."""


@pytest.mark.parametrize("error", [OwnError("rejected"), ValueError("rejected"), RuntimeError("rejected")])
def test_any_error_accepts_any_exception_the_implementation_raises(error):
    with assert_raises(ANY_ERROR, "an error"):
        raise_(error)
    assert_rejected(ANY_ERROR, "an error", lambda: 1, then=lambda result: raise_(error))


@pytest.mark.parametrize("crash", [AttributeError("crash"), NameError("crash"), AssertionError("crash"), Unsupported("no debug")])
def test_any_error_is_not_satisfied_by_a_crash(crash):
    with pytest.raises(AssertionError, match=rf"unexpected exception {type(crash).__name__}.*any exception but a crash"):
        with assert_raises(ANY_ERROR, "an error"):
            raise_(crash)


def test_nothing_raised_fails():
    with pytest.raises(AssertionError, match="nothing was raised"):
        with assert_raises(ValueError, "an error"):
            pass


def test_assert_rejected_judges_the_call_then_the_backward():
    assert_rejected(ValueError, "an error", lambda: raise_(ValueError("at the call")))
    assert_rejected(ValueError, "an error", lambda: 1, then=lambda result: raise_(ValueError("at backward")))
    with pytest.raises(AssertionError, match="unexpected exception AttributeError"):
        assert_rejected(ValueError, "an error", lambda: 1, then=lambda result: raise_(AttributeError("crash")))
    with pytest.raises(AssertionError, match="returned normally"):
        assert_rejected(ValueError, "an error", lambda: 1)


def test_outputs_with_non_tensor_leaves_compare_equal_values_as_equal():
    t = torch.ones(2)
    assert_same_forward({"a": [t, "label", None, 3]}, {"a": (t.clone(), "".join("label"), None, 3)})


@pytest.mark.parametrize("actual, expected", [
    ({"a": [torch.ones(2), "label"]}, {"a": [torch.ones(2), "other"]}),  # a string leaf differs
    ({"a": [torch.zeros(2), "label"]}, {"a": [torch.ones(2), "label"]}),  # a tensor leaf differs
    ([torch.ones(2)], [torch.ones(2), "label"]),  # an item is missing
    ({"b": torch.ones(2)}, {"a": torch.ones(2)}),  # another key
])
def test_a_differing_leaf_or_shape_of_the_output_fails_as_an_assertion(actual, expected):
    with pytest.raises(AssertionError):
        assert_same_forward(actual, expected)
