"""Exceptions raised by the function, in the forward and in the recompute (clauses exceptions.*)."""

import pytest
import torch

from conformance.testing.assertions import assert_same_gradients
from conformance.fixtures.functions import sin_exp
from conformance.fixtures.inputs import leaf, twin_leaves


class RegionError(Exception):
    """Raised by the checkpointed function; an exception type checkpoint cannot know about."""


def failing_forward(error):
    def fn(x):
        x.sin()  # some work before the failure
        raise error

    return fn


def failing_recompute(error):
    """Succeeds in the forward, raises when re-run in backward."""
    calls = []

    def fn(x):
        calls.append(1)
        if len(calls) > 1:
            raise error
        return x.sin().exp()

    return fn


@pytest.mark.clause("exceptions.forward-propagates")
def test_forward_exception_propagates_unchanged(ckpt):
    error = RegionError("raised inside the checkpointed function")
    with pytest.raises(RegionError) as raised:
        ckpt.checkpoint(failing_forward(error), leaf())
    assert raised.value is error, f"checkpoint raised a different exception object: {raised.value!r}"


@pytest.mark.clause("exceptions.recompute-propagates")
def test_recompute_exception_propagates_out_of_backward(ckpt):
    error = RegionError("raised inside the recompute")
    out = ckpt.checkpoint(failing_recompute(error), leaf())
    with pytest.raises(RegionError) as raised:
        out.sum().backward()
    assert raised.value is error or str(raised.value) == str(error), (
        f"backward raised {raised.value!r}, not the function's exception")


def assert_normal_state_after_failure(ckpt, x):
    """Nothing of the failed checkpoint is left behind: grad mode, saved-tensor hooks, checkpoint itself."""
    assert torch.is_grad_enabled(), "grad mode was left disabled by the failed checkpoint"
    # A plain graph built now saves its tensors normally: the saved result is the very output.
    y = x.exp()
    saved = y.grad_fn._saved_result
    assert torch.equal(saved, y), "a plain graph built after the failure does not save its tensors normally"
    packs = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packs.append(1) or t, lambda t: t):
        z = x.sin().exp()
    assert len(packs) == 2, f"a plain sin->exp graph packed {len(packs)} saved tensors (expected 2)"
    z.sum().backward()
    x_ref = leaf()
    x_ref.sin().exp().sum().backward()
    assert_same_gradients(x.grad, x_ref.grad, ["x.grad of a plain graph after the failure"])
    # And checkpoint itself still works.
    x.grad, x_ref.grad = None, None
    ckpt.checkpoint(sin_exp, x).sum().backward()
    sin_exp(x_ref).sum().backward()
    assert_same_gradients(x.grad, x_ref.grad, ["x.grad of a checkpoint after the failure"])


@pytest.mark.clause("exceptions.no-leftover-state")
def test_failed_forward_leaves_nothing_behind(ckpt):
    x, _ = twin_leaves()
    before_draw = torch.get_rng_state()
    with pytest.raises(RegionError):
        ckpt.checkpoint(failing_forward(RegionError()), x)
    # The failing function drew no random numbers, so the RNG stream is where it was.
    assert torch.equal(torch.get_rng_state(), before_draw), "the failed checkpoint changed the global RNG state"
    assert_normal_state_after_failure(ckpt, x)


@pytest.mark.clause("exceptions.no-leftover-state")
def test_failed_recompute_leaves_nothing_behind(ckpt):
    x, _ = twin_leaves()
    out = ckpt.checkpoint(failing_recompute(RegionError()), x)
    state = torch.get_rng_state()
    with pytest.raises(RegionError):
        out.sum().backward()
    assert torch.equal(torch.get_rng_state(), state), "the failed recompute left the global RNG state changed"
    x.grad = None
    assert_normal_state_after_failure(ckpt, x)
