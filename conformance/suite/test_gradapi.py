"""torch.autograd.grad and backward(inputs=...) through a checkpoint (clauses gradapi.*)."""

import pytest
import torch

from conformance.assertions import AUTOGRAD_ERROR, assert_no_gradients, assert_raises, assert_same_gradients
from conformance.fixtures.inputs import twin_leaves
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
    with assert_raises(AUTOGRAD_ERROR, "an error from torch.autograd.grad through a reentrant checkpoint"):
        torch.autograd.grad(loss, [a, b])


@pytest.mark.clause("gradapi.reentrant-rejects-backward-inputs")
def test_reentrant_backward_with_inputs_through_a_checkpoint_raises(ckpt):
    (region, a, b, _), _ = _setup()
    loss = ckpt.checkpoint(region, a, b).sum()
    with assert_raises(AUTOGRAD_ERROR, "an error from backward(inputs=...) through a reentrant checkpoint"):
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
