"""checkpoint called under torch.no_grad() or torch.inference_mode() (clauses callers.*)."""

import pytest
import torch

from conformance.assertions import assert_same_forward, assert_same_gradients
from fixtures.functions import Counted, sin_exp
from fixtures.inputs import twin_leaves


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
