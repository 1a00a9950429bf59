"""retain_graph=True, repeated backward and higher-order gradients (clauses retain.*)."""

import warnings

import pytest
import torch

from conformance.testing.assertions import assert_same_gradients, parameter_grads
from conformance.fixtures.functions import dropout_chain
from conformance.fixtures.inputs import twin_leaves
from conformance.fixtures.models import mlp, twins

BACKWARDS = 3


def backward_repeatedly(out, times=BACKWARDS):
    for i in range(times):
        out.sum().backward(retain_graph=i < times - 1)


@pytest.mark.clause("retain.repeated-backward")
def test_repeated_backward_accumulates_the_gradients(ckpt):
    model, reference = twins(mlp())
    x, x_ref = twin_leaves()
    backward_repeatedly(ckpt.checkpoint(model, x))
    backward_repeatedly(reference(x_ref))
    names = ["x.grad"] + [f"{n}.grad" for n, _ in model.named_parameters()]
    assert_same_gradients([x.grad, *parameter_grads(model)], [x_ref.grad, *parameter_grads(reference)], names)


@pytest.mark.clause("retain.repeated-backward")
def test_repeated_backward_replays_the_forward_random_draws(ckpt):
    if "preserve_rng_state" not in ckpt.impl.capabilities.features:
        pytest.skip("the implementation does not claim RNG preservation, which this dropout case relies on")
    x, x_ref = twin_leaves()
    state = torch.get_rng_state()
    out = ckpt.checkpoint(dropout_chain, x)
    torch.set_rng_state(state)
    expected = dropout_chain(x_ref)
    # Every recompute, not only the first, must reproduce the forward's dropout masks.
    backward_repeatedly(out)
    backward_repeatedly(expected)
    assert_same_gradients(x.grad, x_ref.grad, ["x.grad after 3 retained backwards through dropout"])


def cube_sum(t):
    return (t.sin() * t**2).sum()


@pytest.mark.clause("retain.double-backward")
def test_second_order_gradient_through_autograd_grad(ckpt):
    x, x_ref = twin_leaves()
    (first,) = torch.autograd.grad(ckpt.checkpoint(cube_sum, x), x, create_graph=True)
    (ref_first,) = torch.autograd.grad(cube_sum(x_ref), x_ref, create_graph=True)
    assert first.requires_grad, "the first-order gradient has no graph, so it cannot be differentiated again"
    (second,) = torch.autograd.grad(first.sum(), x)
    (ref_second,) = torch.autograd.grad(ref_first.sum(), x_ref)
    assert_same_gradients([first, second], [ref_first, ref_second], ["first-order gradient", "second-order gradient"])


@pytest.mark.clause("retain.double-backward")
def test_second_order_gradient_through_backward_create_graph(ckpt):
    x, x_ref = twin_leaves()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's reference-cycle notice for backward(create_graph=True)
        ckpt.checkpoint(cube_sum, x).backward(create_graph=True)
        cube_sum(x_ref).backward(create_graph=True)
    first, ref_first = x.grad, x_ref.grad
    assert first.requires_grad, "x.grad has no graph after backward(create_graph=True)"
    x.grad, x_ref.grad = None, None
    first.sum().backward()
    ref_first.sum().backward()
    assert_same_gradients(x.grad, x_ref.grad, ["second-order gradient"])
