"""Several outputs, partial backward and non-ones output gradients (clauses outputs.*)."""

import pytest
import torch

from conformance.testing.assertions import assert_same_forward, assert_same_gradients
from conformance.fixtures.functions import VIEWS, returning_view, two_outputs
from conformance.fixtures.inputs import leaf, twin_leaves


def three_outputs(x, y):
    return x.sin() * y, (x * y).cos(), (y.exp() * x).tanh()


@pytest.mark.clause("outputs.backward-through-one")
@pytest.mark.parametrize("used", [0, 1, 2], ids=["first", "second", "last"])
def test_backward_through_only_one_output(ckpt, used):
    (x, x_ref), (y, y_ref) = twin_leaves(), twin_leaves(seed=2)
    out = ckpt.checkpoint(three_outputs, x, y)
    expected = three_outputs(x_ref, y_ref)
    assert_same_forward(out[used], expected[used], f"output {used}")
    out[used].sum().backward()
    expected[used].sum().backward()
    assert_same_gradients([x.grad, y.grad], [x_ref.grad, y_ref.grad], ["x.grad", "y.grad"])


@pytest.mark.clause("outputs.gradient-argument")
def test_backward_with_a_non_ones_gradient(ckpt):
    (x, x_ref), (y, y_ref) = twin_leaves(), twin_leaves(seed=2)
    v = leaf(seed=3, requires_grad=False)
    ckpt.checkpoint(three_outputs, x, y)[0].backward(gradient=v)
    three_outputs(x_ref, y_ref)[0].backward(gradient=v)
    assert_same_gradients([x.grad, y.grad], [x_ref.grad, y_ref.grad], ["x.grad", "y.grad"])


@pytest.mark.clause("outputs.gradient-argument")
def test_autograd_backward_with_gradients_for_several_outputs(ckpt):
    (x, x_ref), (y, y_ref) = twin_leaves(), twin_leaves(seed=2)
    grads = [leaf(seed=3, requires_grad=False), leaf(seed=4, requires_grad=False)]
    outs = ckpt.checkpoint(two_outputs, x, y)
    torch.autograd.backward(list(outs), grad_tensors=grads)
    torch.autograd.backward(list(two_outputs(x_ref, y_ref)), grad_tensors=grads)
    assert_same_gradients([x.grad, y.grad], [x_ref.grad, y_ref.grad], ["x.grad", "y.grad"])


def shares_memory(t, other) -> bool:
    return t.untyped_storage().data_ptr() == other.untyped_storage().data_ptr()


@pytest.mark.clause("outputs.views-of-inputs")
@pytest.mark.parametrize("view", VIEWS)
def test_an_output_that_views_an_argument_shares_its_memory(ckpt, view):
    # Memory only: the values are api.forward-value's (a MUST), this clause is OBSERVED.
    a, b = leaf(seed=1), leaf(seed=2)
    output = ckpt.checkpoint(returning_view(view), a, b)[0]
    assert shares_memory(output, a), f"the {view} of an argument the function returned comes back as a copy"
