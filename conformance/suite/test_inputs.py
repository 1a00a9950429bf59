"""checkpoint leaves the caller's input tensors as they were (clause inputs.*).

The reentrant variant returns new tensors even for an identity function; that is about outputs. These
tests look only at the inputs the caller passed in.
"""

import warnings

import pytest
import torch

from conformance.assertions import assert_same_gradients
from conformance.fixtures.inputs import ALIASINGS, aliased, leaf


def snapshot(t):
    return dict(value=t.detach().clone(), requires_grad=t.requires_grad, is_leaf=t.is_leaf, grad_fn=t.grad_fn,
                dtype=t.dtype, shape=t.shape)


def assert_unchanged(tensors, snapshots, when):
    for name, t in tensors.items():
        before, now = snapshots[name], snapshot(t)
        assert torch.equal(now["value"], before["value"]), f"{name}: values changed {when}"
        for attribute in ("requires_grad", "is_leaf", "dtype", "shape"):
            assert now[attribute] == before[attribute], (
                f"{name}.{attribute} changed {when}: {before[attribute]} -> {now[attribute]}")
        assert now["grad_fn"] is before["grad_fn"], f"{name}.grad_fn changed {when}"


def inputs():
    source = leaf(seed=4)
    return {
        "leaf requiring grad": leaf(seed=1),
        "tensor not requiring grad": leaf(seed=2, requires_grad=False),
        "non-leaf (has grad_fn)": source * 2,
        "integer tensor": torch.arange(8),
    }


def uses_all(a, b, c, index):
    return (a.sin() * b + c.exp() * a)[:, index % 8].sum(-1)


@pytest.mark.clause("inputs.unchanged")
def test_inputs_are_unchanged_by_forward_and_backward(ckpt):
    tensors = inputs()
    snapshots = {name: snapshot(t) for name, t in tensors.items()}
    out = ckpt.checkpoint(uses_all, *tensors.values())
    assert_unchanged(tensors, snapshots, "by the checkpointed forward")
    out.sum().backward()
    assert_unchanged(tensors, snapshots, "by backward through the checkpoint")


@pytest.mark.clause("inputs.unchanged")
def test_input_that_does_not_require_grad_is_left_alone(ckpt):
    # Only inputs that do not require grad: the reentrant variant then warns and gives no gradients,
    # but it must not make the caller's tensors require grad to get around that.
    # Values and shapes too, not only the autograd flags: an implementation may rewrite the tensors in place.
    x, w = leaf(seed=1, requires_grad=False), leaf(seed=2, requires_grad=False)
    tensors = {"x": x, "w": w}
    snapshots = {name: snapshot(t) for name, t in tensors.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reqgrad.reentrant-warns' business, not this clause's
        out = ckpt.checkpoint(lambda a, b: a * b, x, w)
    assert_unchanged(tensors, snapshots, "by the checkpointed forward")
    if out.requires_grad:
        out.sum().backward()
    assert_unchanged(tensors, snapshots, "by backward through the checkpoint")
    assert x.grad is None and w.grad is None, "an input that does not require grad received a gradient"


@pytest.mark.clause("inputs.unchanged")
def test_identity_function_leaves_its_input_usable(ckpt):
    x, x_ref = leaf(), leaf()
    out = ckpt.checkpoint(lambda t: t, x)
    assert x.is_leaf and x.grad_fn is None and x.requires_grad, "checkpoint of an identity function changed its input"
    (out * x).sum().backward()
    (x_ref * x_ref).sum().backward()
    assert_same_gradients(x.grad, x_ref.grad, ["x.grad"])


@pytest.mark.clause("inputs.unchanged")
@pytest.mark.parametrize("aliasing", ALIASINGS)
def test_aliased_inputs_are_unchanged_by_forward_and_backward(ckpt, aliasing):
    args, leaves = aliased(aliasing)
    tensors = {f"argument {i} ({aliasing})": t for i, t in enumerate(args)}
    tensors.update({f"leaf {i} under the arguments": t for i, t in enumerate(leaves)})
    snapshots = {name: snapshot(t) for name, t in tensors.items()}
    out = ckpt.checkpoint(lambda a, b: (a * b).sin() + a.exp(), *args)
    assert_unchanged(tensors, snapshots, "by the checkpointed forward")
    out.sum().backward()
    assert_unchanged(tensors, snapshots, "by backward through the checkpoint")
