"""The recompute runs under the forward's autocast state (clauses autocast.*)."""

import pytest
import torch

from conformance.testing.assertions import assert_same_forward, assert_same_gradients, parameter_grads
from conformance.fixtures.inputs import twin_leaves
from conformance.fixtures.models import mlp, twins

# The dtypes CPU autocast computes in: its default (bfloat16) and the other one it supports (float16).
AUTOCAST_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}


def dtype_recorder(model, dtypes):
    """Runs model and records the dtype its matmuls produce (the autocast state it ran under)."""

    def fn(x):
        hidden = model[0](x)
        dtypes.append(hidden.dtype)
        return model[1:](hidden).float()

    return fn


def cpu_autocast(autocast_dtype, enabled=True):
    return torch.autocast("cpu", dtype=AUTOCAST_DTYPES[autocast_dtype], enabled=enabled)


@pytest.mark.clause("autocast.recompute-under-forward-state")
@pytest.mark.parametrize("autocast_dtype", AUTOCAST_DTYPES)
def test_recompute_sees_the_forward_autocast_dtype(ckpt, autocast_dtype):
    model, reference = twins(mlp())
    x, x_ref = twin_leaves()
    dtypes = []
    with cpu_autocast(autocast_dtype):
        out = ckpt.checkpoint(dtype_recorder(model, dtypes), x)
        expected = dtype_recorder(reference, [])(x_ref)
    out.sum().backward()  # autocast is off here: the recompute must restore the forward's state itself
    expected.sum().backward()
    assert len(dtypes) >= 2, "the function was not re-run in backward"
    assert set(dtypes) == {AUTOCAST_DTYPES[autocast_dtype]}, f"dtypes seen in forward then recompute: {dtypes}"
    assert_same_forward(out, expected)
    names = ["x.grad"] + [f"{n}.grad" for n, _ in model.named_parameters()]
    assert_same_gradients([x.grad, *parameter_grads(model)], [x_ref.grad, *parameter_grads(reference)], names)


@pytest.mark.clause("autocast.backward-state-ignored")
@pytest.mark.parametrize("autocast_dtype", AUTOCAST_DTYPES)
def test_recompute_without_autocast_stays_without_it_inside_a_disabled_region(ckpt, autocast_dtype):
    model, reference = twins(mlp())
    x, x_ref = twin_leaves()
    dtypes = []
    with cpu_autocast(autocast_dtype):
        with cpu_autocast(autocast_dtype, enabled=False):  # autocast explicitly disabled for the region
            out = ckpt.checkpoint(dtype_recorder(model, dtypes), x)
            expected = dtype_recorder(reference, [])(x_ref)
        out.sum().backward()  # backward inside the enabled region must not switch the recompute to autocast_dtype
        expected.sum().backward()
    assert len(dtypes) >= 2, "the function was not re-run in backward"
    assert set(dtypes) == {torch.float32}, f"dtypes seen in forward then recompute: {dtypes}"
    assert_same_gradients(x.grad, x_ref.grad, ["x.grad"])


@pytest.mark.clause("autocast.backward-state-ignored")
@pytest.mark.parametrize("autocast_dtype", AUTOCAST_DTYPES)
def test_autocast_around_backward_only_does_not_reach_the_recompute(ckpt, autocast_dtype):
    model, reference = twins(mlp())
    x, x_ref = twin_leaves()
    dtypes = []
    out = ckpt.checkpoint(dtype_recorder(model, dtypes), x)
    expected = dtype_recorder(reference, [])(x_ref)
    with cpu_autocast(autocast_dtype):
        out.sum().backward()
        expected.sum().backward()
    assert len(dtypes) >= 2, "the function was not re-run in backward"
    assert set(dtypes) == {torch.float32}, f"dtypes seen in forward then recompute: {dtypes}"
    names = ["x.grad"] + [f"{n}.grad" for n, _ in model.named_parameters()]
    assert_same_gradients([x.grad, *parameter_grads(model)], [x_ref.grad, *parameter_grads(reference)], names)
