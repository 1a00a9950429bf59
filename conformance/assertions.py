"""Assertion helpers named in the specification's vocabulary, so that a failure reads like the
violated clause. Tolerances are torch.testing's defaults for the dtype: a wrong dropout mask or a
missing gradient is far outside them, float reassociation noise is inside."""

from __future__ import annotations

import contextlib
import warnings

import torch


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
        assert type(actual) is type(expected), (
            f"{what}: the function returned a {type(expected).__name__}, checkpoint a {type(actual).__name__}")
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        assert len(actual) == len(expected), f"{what}: {len(expected)} items returned, checkpoint gives {len(actual)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same_forward(a, e, f"{what}[{i}]", same_types=same_types)
    elif isinstance(expected, dict) and isinstance(actual, dict):
        assert list(actual) == list(expected), f"{what}: keys {list(expected)} returned, checkpoint gives {list(actual)}"
        for key in expected:
            assert_same_forward(actual[key], expected[key], f"{what}[{key!r}]", same_types=same_types)
    elif isinstance(expected, torch.Tensor) or not same_types and (
            expected is None or isinstance(expected, (int, float, complex))):
        torch.testing.assert_close(actual, expected, msg=lambda m: f"checkpointed {what} differs from the un-checkpointed {what}: {m}")
    else:
        assert type(actual) is type(expected) and actual == expected, (
            f"{what}: the function returned {expected!r}, checkpoint {actual!r}")


def assert_same_gradients(actual, expected, names=None):
    """Each gradient equals the un-checkpointed run's; None (no gradient) must match None."""
    actual, expected = _flat(actual), _flat(expected)
    names = names or [f"gradient {i}" for i in range(len(expected))]
    assert len(actual) == len(expected), f"expected {len(expected)} gradients, got {len(actual)}"
    for name, a, e in zip(names, actual, expected):
        if e is None:
            assert a is None, f"{name}: the un-checkpointed run gives no gradient, the checkpointed run gives one"
            continue
        assert a is not None, f"{name}: missing (None) where the un-checkpointed run has a gradient"
        torch.testing.assert_close(a, e, msg=lambda m, name=name: f"{name} differs from the un-checkpointed run: {m}")


def grads_of(tensors):
    return [t.grad for t in tensors]


def parameter_grads(module):
    return [p.grad for p in module.parameters()]


def assert_no_gradients(tensors, names=None):
    """None of the tensors received a gradient."""
    for i, t in enumerate(tensors):
        name = names[i] if names else f"tensor {i}"
        assert t.grad is None, f"{name} received a gradient, but the clause says it gets none"


def assert_rng_stream_unchanged(expected_next_draw, *, device="cpu", what="after backward"):
    """The next draw from the global RNG equals the one the un-checkpointed run saw at this point."""
    actual = torch.rand(expected_next_draw.shape, device=device)
    assert torch.equal(actual, expected_next_draw), (
        f"the RNG stream seen outside the checkpoint {what} differs from the un-checkpointed run's: "
        "the recompute advanced (or did not restore) the global RNG state"
    )


@contextlib.contextmanager
def assert_warns(category=UserWarning, what="a warning"):
    """At least one warning of category is emitted inside the block (deduplication disabled)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    assert any(issubclass(w.category, category) for w in caught), (
        f"expected {what} ({category.__name__}), none was emitted; got {[str(w.message)[:80] for w in caught]}"
    )


# Exception families for rejections whose type the docs do not fix. A rejection must come from one of
# the family the clause names: an adapter's Unsupported, a NameError or an AttributeError (a crash, not a
# rejection) never satisfies it.
INVALID_ARGUMENT = (TypeError, ValueError)  # a call whose arguments the function does not accept
AUTOGRAD_ERROR = (RuntimeError,)  # an error autograd (or CheckpointError, a RuntimeError) raises


def _names(expected) -> str:
    expected = expected if isinstance(expected, tuple) else (expected,)
    return " or ".join(e.__name__ for e in expected)


def _unexpected(other, expected, what) -> AssertionError:
    return AssertionError(f"unexpected exception {type(other).__name__}: {str(other)[:200]} "
                          f"(expected {what}: {_names(expected)})")


@contextlib.contextmanager
def assert_raises(expected, what="an error"):
    """The block raises expected (a type or a tuple of types, any subclass); wrap only the one call that
    should raise. There is no default: the clause names the type or the family. Any other exception is
    reported as unexpected, with its traceback chained."""
    try:
        yield
    except expected:
        return
    except Exception as other:  # noqa: BLE001  (reported, not accepted)
        raise _unexpected(other, expected, what) from other
    raise AssertionError(f"expected {what} ({_names(expected)}), nothing was raised")


def backward_of_sum(output):
    """Backward from the sum of a tensor output (where a rejection may come at backward instead)."""
    output.sum().backward()


def assert_rejected(expected, what, call, *args, then=None, **kwargs):
    """call(*args, **kwargs) is rejected with expected. Its arguments are evaluated by the caller, so only
    the call itself is judged. Where the docs do not fix the moment, then(result) (a backward) may raise
    it instead: the rejection happens at the call or at backward, nothing in between counts."""
    try:
        result = call(*args, **kwargs)
    except expected:
        return
    except Exception as other:  # noqa: BLE001  (reported, not accepted)
        raise _unexpected(other, expected, what) from other
    if then is None:
        raise AssertionError(f"expected {what} ({_names(expected)}), the call returned normally")
    with assert_raises(expected, f"{what} (at backward, since the call returned)"):
        then(result)


def assert_same_output(actual, expected, where="output"):
    """The checkpointed output is the function's output in type and structure, element by element:
    tensors equal (dtype included), other items of the same type and equal."""
    assert_same_forward(actual, expected, where, same_types=True)
