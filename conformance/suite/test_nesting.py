"""Checkpoints nested inside checkpoints (clause nesting.*).

The outer checkpoint uses the test's variant; the inner one is parametrized over both variants, so
the four outer x inner combinations are covered.
"""

import pytest

from conformance.testing.assertions import assert_same_forward, assert_same_gradients, parameter_grads
from conformance.plugin.binding import Checkpointer
from conformance.data.registry import VARIANTS
from conformance.fixtures.inputs import twin_leaves
from conformance.fixtures.models import mlp, twins

# A reentrant outer forward runs under no_grad, so an inner reentrant checkpoint called there warns that
# no input requires grad (clause reqgrad.reentrant-warns); that warning is expected and not this area's.
pytestmark = pytest.mark.filterwarnings("ignore:None of the inputs have requires_grad:UserWarning")


def inner_checkpointer(ckpt, inner_variant):
    if inner_variant not in ckpt.impl.capabilities.variants:
        pytest.skip(f"the implementation does not claim the {inner_variant} variant used by the inner checkpoint")
    return Checkpointer(ckpt.impl, inner_variant)


def block(first, second, run_inner):
    """first, then second through run_inner (a nested checkpoint, or a plain call), then a nonlinearity."""

    def fn(x):
        return run_inner(second, first(x).sin()).exp()

    return fn


def plain(function, *args):
    return function(*args)


@pytest.mark.clause("nesting.correct-gradients")
@pytest.mark.parametrize("inner_variant", VARIANTS)
def test_checkpoint_inside_checkpoint(ckpt, inner_variant):
    inner = inner_checkpointer(ckpt, inner_variant)
    (first, first_ref), (second, second_ref) = twins(mlp(seed=1)), twins(mlp(seed=2))
    x, x_ref = twin_leaves()
    out = ckpt.checkpoint(block(first, second, inner.checkpoint), x)
    expected = block(first_ref, second_ref, plain)(x_ref)
    assert_same_forward(out, expected)
    out.sum().backward()
    expected.sum().backward()
    names = ["x.grad"] + [f"first.{n}.grad" for n, _ in first.named_parameters()] + [
        f"second.{n}.grad" for n, _ in second.named_parameters()]
    assert_same_gradients([x.grad, *parameter_grads(first), *parameter_grads(second)],
                          [x_ref.grad, *parameter_grads(first_ref), *parameter_grads(second_ref)], names)


@pytest.mark.clause("nesting.correct-gradients")
@pytest.mark.parametrize("inner_variant", VARIANTS)
def test_two_sibling_checkpoints_inside_a_checkpoint(ckpt, inner_variant):
    inner = inner_checkpointer(ckpt, inner_variant)
    (x, x_ref), (y, y_ref) = twin_leaves(), twin_leaves(seed=2)

    def region(a, b, run):
        left = run(lambda t: t.sin() * b, a)
        right = run(lambda t: (t * b).cos(), a)
        return left * right

    out = ckpt.checkpoint(region, x, y, inner.checkpoint)
    expected = region(x_ref, y_ref, plain)
    assert_same_forward(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_same_gradients([x.grad, y.grad], [x_ref.grad, y_ref.grad], ["x.grad", "y.grad"])


@pytest.mark.clause("nesting.correct-gradients")
@pytest.mark.parametrize("inner_variant", VARIANTS)
def test_three_levels_of_nesting(ckpt, inner_variant):
    inner = inner_checkpointer(ckpt, inner_variant)
    x, x_ref = twin_leaves()

    def level(depth, run):
        def fn(t):
            t = t.sin() * 1.5
            return (run(level(depth - 1, run), t) if depth else t).exp().tanh()

        return fn

    out = ckpt.checkpoint(level(2, inner.checkpoint), x)
    expected = level(2, plain)(x_ref)
    assert_same_forward(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_same_gradients(x.grad, x_ref.grad, ["x.grad"])
