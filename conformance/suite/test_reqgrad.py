"""Inputs that do not require grad (clauses reqgrad.*)."""

import warnings

import pytest
import torch

from conformance.assertions import assert_no_gradients, assert_same_gradients, assert_warns, parameter_grads
from conformance.fixtures.inputs import leaf
from conformance.fixtures.models import mlp, twins


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


# The function's body when no input requires grad: parameters only, or parameters and random draws.
BODIES = {"parameters": 0.0, "parameters-and-random-ops": 0.5}  # name -> dropout probability


def _frozen_run(run, body, seed=1234):
    """A dropout MLP (p from body) on an input that does not require grad, from a fixed seed; the model."""
    model = mlp(dropout=BODIES[body])
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warning is reqgrad.reentrant-warns' business
        out = run(model, leaf(requires_grad=False))
    if out.requires_grad:
        out.sum().backward()
    return model


@pytest.mark.clause("reqgrad.non-reentrant-gradients")
@pytest.mark.parametrize("body", BODIES)
def test_non_reentrant_frozen_inputs_with_parameters_and_random_ops(ckpt, body):
    model = _frozen_run(ckpt.checkpoint, body)
    reference = _frozen_run(lambda m, x: m(x), body)
    assert_same_gradients(parameter_grads(model), parameter_grads(reference), [n for n, _ in model.named_parameters()])


@pytest.mark.clause("reqgrad.reentrant-no-gradients")
@pytest.mark.parametrize("body", BODIES)
def test_reentrant_frozen_inputs_leave_parameters_and_random_ops_without_gradients(ckpt, body):
    model = _frozen_run(ckpt.checkpoint, body)
    assert_no_gradients(list(model.parameters()), [n for n, _ in model.named_parameters()])
