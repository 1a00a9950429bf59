"""torch.autograd.grad and backward(inputs=...) through a checkpoint (clauses gradapi.*)."""

import pytest
import torch

from conformance.testing.assertions import (ANY_ERROR, assert_no_gradients, assert_raises, assert_same_gradients,
                                   parameter_grads, satisfies)
from conformance.fixtures.inputs import leaf, twin_leaves
from conformance.fixtures.models import mlp, twins


def _setup():
    """A region of two inputs and closed-over parameters, and its un-checkpointed twin."""
    model, reference = twins(mlp())
    (a, reference_a), (b, reference_b) = twin_leaves(seed=1), twin_leaves(seed=2)

    def region(model):
        return lambda x, y: model(x * y + x)

    return (region(model), a, b, model), (region(reference), reference_a, reference_b, reference)


@pytest.mark.clause("gradapi.reentrant-rejects-grad")
def test_reentrant_autograd_grad_through_a_checkpoint_raises(ckpt):
    (region, a, b, _), _ = _setup()
    loss = ckpt.checkpoint(region, a, b).sum()
    with assert_raises(ANY_ERROR, "an error from torch.autograd.grad through a reentrant checkpoint"):
        torch.autograd.grad(loss, [a, b])


@pytest.mark.clause("gradapi.reentrant-rejects-backward-inputs")
def test_reentrant_backward_with_inputs_through_a_checkpoint_raises(ckpt):
    (region, a, b, _), _ = _setup()
    loss = ckpt.checkpoint(region, a, b).sum()
    with assert_raises(ANY_ERROR, "an error from backward(inputs=...) through a reentrant checkpoint"):
        loss.backward(inputs=[a])


# What autograd.grad differentiates with respect to: name -> picks tensors from (a, b, model, h),
# where h = 2 * a is a non-leaf computed before the checkpoint and passed in place of a.
WITH_RESPECT_TO = {
    "inputs": lambda a, b, model, h: [a, b],
    "parameters": lambda a, b, model, h: list(model.parameters()),
    "non-leaf-input": lambda a, b, model, h: [h],
    "input-and-parameters": lambda a, b, model, h: [b, *model.parameters()],
}


@pytest.mark.clause("gradapi.non-reentrant-grad")
@pytest.mark.parametrize("wrt", WITH_RESPECT_TO)
def test_non_reentrant_autograd_grad_gives_the_uncheckpointed_gradients(ckpt, wrt):
    (region, a, b, model), (reference_region, reference_a, reference_b, reference) = _setup()
    h, reference_h = a * 2, reference_a * 2
    actual = torch.autograd.grad(ckpt.checkpoint(region, h, b).sum(), WITH_RESPECT_TO[wrt](a, b, model, h))
    expected = torch.autograd.grad(reference_region(reference_h, reference_b).sum(),
                                   WITH_RESPECT_TO[wrt](reference_a, reference_b, reference, reference_h))
    assert_same_gradients(list(actual), list(expected))
    assert_no_gradients([a, b, *model.parameters()], ["a", "b"] + [n for n, _ in model.named_parameters()])


# backward(inputs=...): name -> picks the tensors to accumulate into from (a, b, model).
ACCUMULATE_INTO = {
    "one-input": lambda a, b, model: [a],
    "one-parameter": lambda a, b, model: [model[0].weight],
    "input-and-parameter": lambda a, b, model: [b, model[-2].bias],
}


@pytest.mark.clause("gradapi.non-reentrant-backward-inputs")
@pytest.mark.parametrize("into", ACCUMULATE_INTO)
def test_non_reentrant_backward_with_inputs_accumulates_exactly_into_those(ckpt, into):
    (region, a, b, model), (reference_region, reference_a, reference_b, reference) = _setup()
    chosen = ACCUMULATE_INTO[into](a, b, model)
    ckpt.checkpoint(region, a, b).sum().backward(inputs=chosen)
    reference_region(reference_a, reference_b).sum().backward()
    named = {"a": (a, reference_a), "b": (b, reference_b)}
    named.update({n: (p, q) for (n, p), q in zip(model.named_parameters(), reference.parameters())})
    for name, (tensor, reference_tensor) in named.items():
        if any(tensor is c for c in chosen):
            assert_same_gradients(tensor.grad, reference_tensor.grad, [name])
        else:
            assert_no_gradients([tensor], [f"{name} (not in inputs=)"])


# ---- torch's test_checkpoint_valid_reset_on_error (test_autograd.py) and test_checkpoint_valid
# ---- (test_utils.py): docs/UPSTREAM_TESTS.md ----

@pytest.mark.clause("gradapi.reentrant-backward-after-rejection")
def test_backward_through_a_new_checkpoint_works_after_autograd_grad_was_rejected(ckpt):
    (region, a, b, _), _ = _setup()
    loss = ckpt.checkpoint(region, a, b).sum()
    try:
        torch.autograd.grad(loss, [a, b])
    except Exception as raised:  # the rejection; that it comes is gradapi.reentrant-rejects-grad's test
        if not satisfies(raised, ANY_ERROR):
            raise
    (region, a, b, model), (reference_region, reference_a, reference_b, reference) = _setup()
    ckpt.checkpoint(region, a, b).sum().backward()
    reference_region(reference_a, reference_b).sum().backward()
    assert_same_gradients([a.grad, b.grad, *parameter_grads(model)],
                          [reference_a.grad, reference_b.grad, *parameter_grads(reference)],
                          ["a", "b", *(name for name, _ in model.named_parameters())])


@pytest.mark.clause("gradapi.reentrant-rejects-grad")
def test_reentrant_autograd_grad_through_checkpoint_sequential_raises(ckpt):
    x = leaf()
    loss = ckpt.sequential(mlp(depth=3), 2, x).sum()
    with assert_raises(ANY_ERROR, "an error from torch.autograd.grad through a reentrant checkpoint_sequential"):
        torch.autograd.grad(loss, [x])


def _first_and_second_order_gradients(output, model, x):
    """autograd.grad with create_graph=True with respect to x and the parameters, then the gradients of the
    squared norm of those gradients (a gradient penalty)."""
    wrt = [x, *model.parameters()]
    first = torch.autograd.grad(output.sum(), wrt, create_graph=True)
    penalty = sum((g * g).sum() for g in first)
    return [*first, *torch.autograd.grad(penalty, wrt, allow_unused=True)]


@pytest.mark.clause("gradapi.non-reentrant-grad")
def test_non_reentrant_autograd_grad_through_checkpoint_sequential_gives_the_uncheckpointed_gradients(ckpt):
    model, reference = twins(mlp(depth=3))
    x, reference_x = twin_leaves()
    actual = _first_and_second_order_gradients(ckpt.sequential(model, 2, x), model, x)
    expected = _first_and_second_order_gradients(reference(reference_x), reference, reference_x)
    names = ["x", *(name for name, _ in model.named_parameters())]
    assert_same_gradients(actual, expected, [f"{order} gradient of {name}" for order in ("first-order", "second-order")
                                             for name in names])
