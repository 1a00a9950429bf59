"""Inputs that do not require grad (clauses reqgrad.*)."""

import warnings

import pytest
import torch
from torch import nn

from conformance.testing.assertions import assert_no_gradients, assert_same_gradients, assert_warns, parameter_grads
from conformance.fixtures.functions import STRUCTURES, TOP_LEVEL_STRUCTURES, tensors_in, weighted_loss
from conformance.fixtures.inputs import WIDTH, leaf
from conformance.fixtures.models import mlp, seeded, twins


@pytest.mark.clause("reqgrad.reentrant-warns")
def test_reentrant_warns_when_no_input_requires_grad(ckpt):
    model = mlp()
    with assert_warns(Warning, "the 'no input requires grad' warning"):  # any category: the docs name none
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


# ---- a frozen block under a trainable head: nothing the region reads requires grad -------------------


def _frozen_block_output(run, body, structure, seed=1234):
    """The output, in the named structure, of a frozen block (an MLP whose parameters do not require grad,
    dropout per body) on an input that does not require grad, run by run(function, input) from a fixed seed."""
    block = mlp(dropout=BODIES[body]).requires_grad_(False)
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warning is reqgrad.reentrant-warns' business
        return run(lambda x: STRUCTURES[structure](block(x), x), leaf(requires_grad=False))


def _plain(function, x):
    return function(x)


@pytest.mark.clause("reqgrad.frozen-block-output")
@pytest.mark.parametrize("structure", TOP_LEVEL_STRUCTURES)
@pytest.mark.parametrize("body", BODIES)
def test_output_of_a_frozen_block_does_not_require_grad(ckpt, body, structure):
    out = _frozen_block_output(ckpt.checkpoint, body, structure)
    assert tensors_in(out), "the frozen block returned no tensor"
    assert not any(t.requires_grad for t in tensors_in(out)), (
        f"an output of a frozen block requires grad ({structure}): nothing the function read requires grad")


@pytest.mark.clause("reqgrad.frozen-block-head-trains")
@pytest.mark.parametrize("structure", TOP_LEVEL_STRUCTURES)
@pytest.mark.parametrize("body", BODIES)
def test_trainable_head_after_a_frozen_block_gets_the_uncheckpointed_gradients(ckpt, body, structure):
    head, reference_head = twins(seeded(lambda: nn.Linear(WIDTH, WIDTH), seed=1))
    out = _frozen_block_output(ckpt.checkpoint, body, structure)
    expected = _frozen_block_output(_plain, body, structure)
    weighted_loss([head(t) for t in tensors_in(out)]).backward()  # must not need the frozen block again
    weighted_loss([reference_head(t) for t in tensors_in(expected)]).backward()
    assert_same_gradients(parameter_grads(head), parameter_grads(reference_head),
                          [f"head.{n}.grad" for n, _ in head.named_parameters()])
