"""checkpoint called under torch.no_grad() or torch.inference_mode() (clauses callers.*)."""

import pytest
import torch

from conformance.testing.assertions import assert_same_forward, assert_same_gradients, assert_same_output
from conformance.fixtures.functions import STRUCTURES, Counted, sin_exp, tensors_in
from conformance.fixtures.inputs import leaf, twin_leaves


def assert_plain_forward(ckpt, grad_off):
    """Under grad_off the call is a plain forward; afterwards checkpoint works normally."""
    x, x_ref = twin_leaves()
    fn = Counted(sin_exp)
    with grad_off():
        out = ckpt.checkpoint(fn, x)
        assert torch.is_grad_enabled() is False, f"checkpoint switched grad mode back on inside {grad_off.__name__}"
    assert fn.calls == 1, f"the function ran {fn.calls} times under {grad_off.__name__} (expected once)"
    assert not out.requires_grad, f"the output requires grad although checkpoint was called under {grad_off.__name__}"
    with torch.no_grad():
        assert_same_forward(out, sin_exp(x_ref))
    # Normal use afterwards is unaffected.
    after = ckpt.checkpoint(sin_exp, x)
    after.sum().backward()
    sin_exp(x_ref).sum().backward()
    assert_same_gradients(x.grad, x_ref.grad, ["x.grad of a checkpoint called afterwards"])


@pytest.mark.clause("callers.no-grad")
def test_checkpoint_under_no_grad_is_a_plain_forward(ckpt):
    assert_plain_forward(ckpt, torch.no_grad)


@pytest.mark.clause("callers.inference-mode")
def test_checkpoint_under_inference_mode_is_a_plain_forward(ckpt):
    assert_plain_forward(ckpt, torch.inference_mode)


def assert_output_of_structure_with_grad_off(ckpt, grad_off, structure):
    function = Counted(STRUCTURES[structure])
    x, y = leaf(seed=1), leaf(seed=2)
    with grad_off():
        out = ckpt.checkpoint(function, x, y)
        expected = STRUCTURES[structure](x, y)
    assert function.calls == 1, f"the function ran {function.calls} times under {grad_off.__name__} (expected once)"
    assert_same_output(out, expected)
    assert not any(t.requires_grad for t in tensors_in(out)), f"an output requires grad under {grad_off.__name__}"


@pytest.mark.clause("callers.no-grad")
@pytest.mark.parametrize("structure", STRUCTURES)
def test_output_of_any_structure_is_the_functions_under_no_grad(ckpt, structure):
    assert_output_of_structure_with_grad_off(ckpt, torch.no_grad, structure)


@pytest.mark.clause("callers.inference-mode")
@pytest.mark.parametrize("structure", STRUCTURES)
def test_output_of_any_structure_is_the_functions_under_inference_mode(ckpt, structure):
    assert_output_of_structure_with_grad_off(ckpt, torch.inference_mode, structure)
