"""The assertion helpers fail for the right reasons: a rejection is satisfied only by the named type."""

import pytest

from conformance.assertions import INVALID_ARGUMENT, assert_raises, assert_rejected


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
