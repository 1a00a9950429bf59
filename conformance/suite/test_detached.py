"""Detached tensors and no_grad blocks inside the checkpointed region (clauses detached.*).

Every loss below also uses the input outside the region, so it is differentiable even where the
region's own output is not: an error then comes from backward into the region, not from autograd
being handed a loss without a graph.
"""

import pytest
import torch

from conformance.testing.assertions import ANY_ERROR, assert_raises, assert_same_forward, assert_same_gradients
from conformance.fixtures.inputs import twin_leaves
from conformance.fixtures.models import mlp


def detached_output(x):
    return x.sin().detach()


def output_under_no_grad(x):
    with torch.no_grad():
        return x.sin() * 2


FROZEN = mlp()  # only ever run under no_grad, so it never accumulates gradients


def module_under_no_grad(x):
    with torch.no_grad():
        return FROZEN(x)


def detached_inside(x):
    return x * x.sin().detach()


def no_grad_block_inside(x):
    with torch.no_grad():
        scale = x.cos() + 1
    return x.tanh() * scale


def mixed_outputs(x):
    return x.sin(), x.cos().detach()


def _loss(output, x):
    outputs = output if isinstance(output, tuple) else (output,)
    return sum((o * x).sum() for o in outputs) + x.sum()


NO_GRADIENT_OUTPUT = [detached_output, output_under_no_grad, module_under_no_grad]


@pytest.mark.clause("detached.reentrant-error")
@pytest.mark.parametrize("region", NO_GRADIENT_OUTPUT, ids=lambda f: f.__name__)
def test_reentrant_backward_raises_when_the_regions_output_has_no_gradient(ckpt, region):
    x, _ = twin_leaves()
    loss = _loss(ckpt.checkpoint(region, x), x)
    with assert_raises(ANY_ERROR, f"an error from the backward pass ({region.__name__} inside a reentrant checkpoint)"):
        loss.backward()


@pytest.mark.clause("detached.non-reentrant-supported")
@pytest.mark.parametrize("region", NO_GRADIENT_OUTPUT + [detached_inside, no_grad_block_inside, mixed_outputs],
                         ids=lambda f: f.__name__)
def test_non_reentrant_region_with_detached_tensors_gives_the_plain_results(ckpt, region):
    x, reference_x = twin_leaves()
    actual, expected = ckpt.checkpoint(region, x), region(reference_x)
    assert_same_forward(actual, expected)
    requires = [o.requires_grad for o in (actual if isinstance(actual, tuple) else (actual,))]
    expected_requires = [o.requires_grad for o in (expected if isinstance(expected, tuple) else (expected,))]
    assert requires == expected_requires, f"outputs' requires_grad {requires}, the plain run's {expected_requires}"
    _loss(actual, x).backward()
    _loss(expected, reference_x).backward()
    assert_same_gradients(x.grad, reference_x.grad, ["gradient of the input"])
