"""Assertion helpers named in the specification's vocabulary, so that a failure reads like the
violated clause. Tolerances are torch.testing's defaults for the dtype: a wrong dropout mask or a
missing gradient is far outside them, float reassociation noise is inside."""

from __future__ import annotations

import contextlib
import warnings

import torch

from conformance.data.capabilities import Unsupported
from conformance.data.causes import DifferenceFound, exception_cause


def _check(condition, observable: str, detail: str) -> None:
    """``assert condition`` whose failure's cause is a difference in ``observable`` (conformance/data/causes.py)."""
    if not condition:
        raise DifferenceFound(observable, detail)


def _assert_close(actual, expected, observable: str, what) -> None:
    """torch.testing.assert_close, failing with the difference as its cause; what(message) words it."""
    try:
        torch.testing.assert_close(actual, expected)
    except AssertionError as exc:
        raise DifferenceFound(observable, what(str(exc))) from None


def _flat(values):
    if isinstance(values, torch.Tensor) or values is None:
        return [values]
    return list(values)


def assert_same_forward(actual, expected, what="output", *, same_types=False):
    """The checkpointed forward value equals the un-checkpointed one, in the same nesting of sequences and
    mappings: tensors close (dtype included); numbers close and None as None; any other value (a string,
    which torch.testing.assert_close cannot compare) equal. With ``same_types`` (assert_same_output) each
    container and item is of the very type the function returned, and every non-tensor item is equal."""
    if same_types:
        _check(type(actual) is type(expected), "result",
               f"{what}: the function returned a {type(expected).__name__}, checkpoint a {type(actual).__name__}")
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        _check(len(actual) == len(expected), "result", f"{what}: {len(expected)} items returned, checkpoint gives {len(actual)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same_forward(a, e, f"{what}[{i}]", same_types=same_types)
    elif isinstance(expected, dict) and isinstance(actual, dict):
        _check(list(actual) == list(expected), "result", f"{what}: keys {list(expected)} returned, checkpoint gives {list(actual)}")
        for key in expected:
            assert_same_forward(actual[key], expected[key], f"{what}[{key!r}]", same_types=same_types)
    elif isinstance(expected, torch.Tensor) or not same_types and (
            expected is None or isinstance(expected, (int, float, complex))):
        _assert_close(actual, expected, "result", lambda m: f"checkpointed {what} differs from the un-checkpointed {what}: {m}")
    else:
        _check(type(actual) is type(expected) and actual == expected, "result",
               f"{what}: the function returned {expected!r}, checkpoint {actual!r}")


def assert_same_gradients(actual, expected, names=None):
    """Each gradient equals the un-checkpointed run's; None (no gradient) must match None."""
    actual, expected = _flat(actual), _flat(expected)
    names = names or [f"gradient {i}" for i in range(len(expected))]
    _check(len(actual) == len(expected), "gradient-presence", f"expected {len(expected)} gradients, got {len(actual)}")
    for name, a, e in zip(names, actual, expected):
        if e is None:
            _check(a is None, "gradient-presence", f"{name}: the un-checkpointed run gives no gradient, the checkpointed run gives one")
            continue
        _check(a is not None, "gradient-presence", f"{name}: missing (None) where the un-checkpointed run has a gradient")
        _assert_close(a, e, "gradients", lambda m, name=name: f"{name} differs from the un-checkpointed run: {m}")


def assert_same_buffers(module, plain):
    """The module's buffers (running statistics, counters) equal those the un-checkpointed module was left with."""
    actual, expected = dict(module.named_buffers()), dict(plain.named_buffers())
    _check(list(actual) == list(expected), "objects", f"buffers {list(actual)}, without checkpoint {list(expected)}")
    for name, value in expected.items():
        _assert_close(actual[name], value, "objects", lambda m, name=name: f"buffer {name!r} after forward and backward: {m}")


def grads_of(tensors):
    return [t.grad for t in tensors]


def parameter_grads(module):
    return [p.grad for p in module.parameters()]


def assert_no_gradients(tensors, names=None):
    """None of the tensors received a gradient."""
    for i, t in enumerate(tensors):
        name = names[i] if names else f"tensor {i}"
        _check(t.grad is None, "gradient-presence", f"{name} received a gradient, but the clause says it gets none")


def assert_rng_stream_unchanged(expected_next_draw, *, device="cpu", what="after backward"):
    """The next draw from the global RNG equals the one the un-checkpointed run saw at this point."""
    actual = torch.rand(expected_next_draw.shape, device=device)
    _check(torch.equal(actual, expected_next_draw), "rng",
           f"the RNG stream seen outside the checkpoint {what} differs from the un-checkpointed run's: "
           "the recompute advanced (or did not restore) the global RNG state")


@contextlib.contextmanager
def assert_warns(category=Warning, what="a warning"):
    """At least one warning of category is emitted inside the block (deduplication disabled). Where the docs
    name no category (they never do for checkpoint's warnings), any Warning is a warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    assert any(issubclass(w.category, category) for w in caught), (
        f"expected {what} ({category.__name__}), none was emitted; got {[str(w.message)[:80] for w in caught]}"
    )


# What satisfies a check that an error is raised. Where the docs name the type, that type. Where they name
# none ("the backward pass will raise an error", "only supported if use_reentrant=False"), any exception
# (ANY_ERROR): the implementation's own class, a RuntimeError, a ValueError alike. Only a crash is never a
# rejection: an AttributeError or a NameError (code failing on its way to a check), an AssertionError, an
# adapter's Unsupported (the harness cannot make the call). An OBSERVED clause, which records torch's
# behaviour where the docs are silent, names torch's family (INVALID_ARGUMENT: torch's ValueError, or the
# TypeError of a signature).
ANY_ERROR = (Exception,)
CRASHES = (AttributeError, NameError, AssertionError, Unsupported)
INVALID_ARGUMENT = (TypeError, ValueError)  # a call whose arguments the function does not accept


def satisfies(raised: BaseException, expected) -> bool:
    """raised is what a check that expects ``expected`` (a type, a tuple of types, ANY_ERROR) accepts."""
    return isinstance(raised, expected) and not (expected is ANY_ERROR and isinstance(raised, CRASHES))


def _names(expected) -> str:
    if expected is ANY_ERROR:
        return f"any exception but a crash ({', '.join(e.__name__ for e in CRASHES)})"
    expected = expected if isinstance(expected, tuple) else (expected,)
    return " or ".join(e.__name__ for e in expected)


def _unexpected(other, expected, what) -> AssertionError:
    """The failure of a check that wanted another exception: its cause is the exception that was raised."""
    error = AssertionError(f"unexpected exception {type(other).__name__}: {str(other)[:200]} "
                           f"(expected {what}: {_names(expected)})")
    error.causes = (exception_cause(other),)
    return error


@contextlib.contextmanager
def assert_raises(expected, what="an error"):
    """The block raises expected (a type or a tuple of types, any subclass); wrap only the one call that
    should raise. There is no default: the clause names the type or the family. Any other exception is
    reported as unexpected, with its traceback chained."""
    try:
        yield
    except Exception as raised:  # noqa: BLE001  (judged by satisfies: what is not accepted is reported)
        if not satisfies(raised, expected):
            raise _unexpected(raised, expected, what) from raised
        return
    raise DifferenceFound("exception", f"expected {what} ({_names(expected)}), nothing was raised")


def backward_of_sum(output):
    """Backward from the sum of a tensor output (where a rejection may come at backward instead)."""
    output.sum().backward()


def assert_rejected(expected, what, call, *args, then=None, **kwargs):
    """call(*args, **kwargs) is rejected with expected. Its arguments are evaluated by the caller, so only
    the call itself is judged. Where the docs do not fix the moment, then(result) (a backward) may raise
    it instead: the rejection happens at the call or at backward, nothing in between counts."""
    try:
        result = call(*args, **kwargs)
    except Exception as raised:  # noqa: BLE001  (judged by satisfies: what is not accepted is reported)
        if not satisfies(raised, expected):
            raise _unexpected(raised, expected, what) from raised
        return
    if then is None:
        raise DifferenceFound("exception", f"expected {what} ({_names(expected)}), the call returned normally")
    with assert_raises(expected, f"{what} (at backward, since the call returned)"):
        then(result)


def assert_same_output(actual, expected, where="output"):
    """The checkpointed output is the function's output in type and structure, element by element:
    tensors equal (dtype included), other items of the same type and equal."""
    assert_same_forward(actual, expected, where, same_types=True)
