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


def assert_same_forward(actual, expected, what="output"):
    """The checkpointed forward value equals the un-checkpointed one."""
    torch.testing.assert_close(actual, expected, msg=lambda m: f"checkpointed {what} differs from the un-checkpointed {what}: {m}")


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


@contextlib.contextmanager
def assert_raises(exception=Exception, what="an error"):
    """The block raises exception (any subclass). The docs rarely fix the type, so default to Exception."""
    try:
        yield
    except exception:
        return
    raise AssertionError(f"expected {what} ({exception.__name__}), nothing was raised")
