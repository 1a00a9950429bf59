"""Tensors in nested structures: lists, tuples, dicts, custom objects (clauses nested.*)."""

import warnings

import pytest
import torch

from conformance.testing.assertions import assert_same_gradients
from conformance.fixtures.functions import NESTINGS, nest, of_nested
from conformance.fixtures.inputs import twin_leaves

KINDS = list(NESTINGS)


def _nested_leaves():
    (a, reference_a), (b, reference_b) = twin_leaves(seed=1), twin_leaves(seed=2)
    return (a, b), (reference_a, reference_b)


@pytest.mark.clause("nested.non-reentrant-participates")
@pytest.mark.parametrize("kind", KINDS)
def test_non_reentrant_nested_tensors_get_gradients_from_backward(ckpt, kind):
    function = of_nested(kind)
    (a, b), (reference_a, reference_b) = _nested_leaves()
    ckpt.checkpoint(function, nest(kind, a, b)).sum().backward()
    function(nest(kind, reference_a, reference_b)).sum().backward()
    assert_same_gradients([a.grad, b.grad], [reference_a.grad, reference_b.grad], ["nested a", "nested b"])


@pytest.mark.clause("nested.non-reentrant-participates")
@pytest.mark.parametrize("kind", KINDS)
def test_non_reentrant_autograd_grad_reaches_nested_tensors(ckpt, kind):
    function = of_nested(kind)
    (a, b), (reference_a, reference_b) = _nested_leaves()
    actual = torch.autograd.grad(ckpt.checkpoint(function, nest(kind, a, b)).sum(), [a, b])
    expected = torch.autograd.grad(function(nest(kind, reference_a, reference_b)).sum(), [reference_a, reference_b])
    assert_same_gradients(list(actual), list(expected), ["nested a", "nested b"])


@pytest.mark.clause("nested.reentrant-not-considered")
@pytest.mark.parametrize("kind", KINDS)
def test_reentrant_output_does_not_require_grad_when_only_nested_tensors_do(ckpt, kind):
    (a, b), _ = _nested_leaves()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the 'no input requires grad' warning is reqgrad.reentrant-warns' business
        out = ckpt.checkpoint(of_nested(kind), nest(kind, a, b))
    assert not out.requires_grad, (
        f"tensors nested in a {kind} made the reentrant checkpoint's output require grad; the reentrant "
        "variant does not consider nested tensors as participating in autograd"
    )
