"""Inputs that do not require grad (clauses reqgrad.*)."""

import warnings

import pytest

from conformance.assertions import assert_no_gradients, assert_same_gradients, assert_warns, parameter_grads
from fixtures.inputs import leaf
from fixtures.models import mlp, twins


@pytest.mark.clause("reqgrad.reentrant-warns")
def test_reentrant_warns_when_no_input_requires_grad(ckpt):
    model = mlp()
    with assert_warns(UserWarning, "the 'no input requires grad' warning"):
        ckpt.checkpoint(model, leaf(requires_grad=False))


@pytest.mark.clause("reqgrad.reentrant-no-gradients")
def test_reentrant_parameters_get_no_gradient_when_no_input_requires_grad(ckpt):
    model = mlp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warning is reqgrad.reentrant-warns' business, not this clause's
        out = ckpt.checkpoint(model, leaf(requires_grad=False))
    if out.requires_grad:
        out.sum().backward()
    assert_no_gradients(list(model.parameters()), [n for n, _ in model.named_parameters()])


@pytest.mark.clause("reqgrad.non-reentrant-gradients")
def test_non_reentrant_parameters_get_gradients_when_no_input_requires_grad(ckpt):
    model, reference = twins(mlp())
    x = leaf(requires_grad=False)
    ckpt.checkpoint(model, x).sum().backward()
    reference(x).sum().backward()
    assert_same_gradients(parameter_grads(model), parameter_grads(reference), [n for n, _ in model.named_parameters()])
