"""checkpoint leaves the caller's input tensors as they were (clause inputs.*).

The reentrant variant returns new tensors even for an identity function; that is about outputs. These
tests look only at the inputs the caller passed in, right after the call, while the caller reuses them
before backward (a residual connection), and after backward.
"""

import warnings

import pytest
import torch

from conformance.testing.assertions import assert_same_forward, assert_same_gradients
from conformance.fixtures.functions import weighted_loss
from conformance.fixtures.inputs import ALIASINGS, BATCH, WIDTH, aliased, laid_out, leaf


def snapshot(t):
    return dict(value=t.detach().clone(), requires_grad=t.requires_grad, is_leaf=t.is_leaf, grad_fn=t.grad_fn,
                dtype=t.dtype, shape=t.shape, stride=t.stride())


def assert_unchanged(tensors, snapshots, when):
    for name, t in tensors.items():
        before, now = snapshots[name], snapshot(t)
        for attribute in ("shape", "stride", "dtype", "requires_grad", "is_leaf"):
            assert now[attribute] == before[attribute], (
                f"{name}.{attribute} changed {when}: {before[attribute]} -> {now[attribute]}")
        assert torch.equal(now["value"], before["value"]), f"{name}: values changed {when}"
        assert now["grad_fn"] is before["grad_fn"], f"{name}.grad_fn changed {when}"


def caller_tensors():
    """The tensors a caller hands a block, of every autograd kind and memory layout (equal on every call).
    The non-contiguous ones are leaves of their own, so that only their strides tell them apart."""
    source = leaf(seed=4)
    return {
        "leaf requiring grad": leaf(seed=1),
        "tensor not requiring grad": leaf(seed=2, requires_grad=False),
        "leaf under the non-leaf": source,
        "non-leaf (has grad_fn)": source * 2,
        "integer tensor": torch.arange(WIDTH),
        "transposed leaf": laid_out("transposed", seed=5)[0],
        "column slice": laid_out("column-slice", seed=6, requires_grad=False)[0],
        "channels_last leaf": laid_out("channels_last", seed=7)[0],
    }


def as_rows(t):
    return t.reshape(BATCH, WIDTH)


def uses_all(*tensors):
    """Reads every argument: each floating one (as BATCH x WIDTH) with its own weight, the integer one as an index."""
    index = next(t for t in tensors if not t.is_floating_point())
    mixed = sum((i + 1) * as_rows(t).sin() for i, t in enumerate(tensors) if t.is_floating_point())
    return mixed[:, index % WIDTH].exp()


def with_residual(out, tensors):
    """The caller's own use of its inputs after the call: the output plus each floating input."""
    return out + sum(as_rows(t) for t in tensors if t.is_floating_point())


MOMENTS = ("after-forward", "between-passes", "after-backward")


@pytest.mark.clause("inputs.unchanged")
@pytest.mark.parametrize("moment", MOMENTS)
def test_inputs_are_unchanged_when_the_caller_uses_them_again(ckpt, moment):
    tensors = caller_tensors()
    snapshots = {name: snapshot(t) for name, t in tensors.items()}
    out = ckpt.checkpoint(uses_all, *tensors.values())
    if moment == "after-forward":
        assert_unchanged(tensors, snapshots, "right after the checkpointed forward")
    elif moment == "between-passes":
        assert_unchanged(tensors, snapshots, "between the checkpointed forward and backward")
        # A residual connection reuses the inputs before backward: value and gradients through both paths.
        reference = caller_tensors()
        actual = with_residual(out, tensors.values())
        expected = with_residual(uses_all(*reference.values()), reference.values())
        assert_same_forward(actual, expected, "output plus the inputs (a residual connection after the call)")
        weighted_loss(actual).backward()
        weighted_loss(expected).backward()
        trained = [name for name, t in tensors.items() if t.is_leaf and t.requires_grad]
        assert_same_gradients([tensors[n].grad for n in trained], [reference[n].grad for n in trained],
                              [f"{n}.grad through the block and the residual" for n in trained])
    else:
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


# ---- torch's test_checkpointing_without_reentrant_saved_object_identity (docs/UPSTREAM_TESTS.md) ----

@pytest.mark.clause("inputs.non-reentrant-recompute-gets-the-passed-tensors")
def test_recompute_receives_the_tensor_objects_the_caller_passed(ckpt):
    a, b, c = leaf(seed=1), leaf(seed=2, requires_grad=False), leaf(seed=3) * 2
    kinds = ("a leaf that requires grad", "a leaf that does not", "a non-leaf")
    received = []  # per call of the region: which arguments were the caller's own objects

    def region(x, y, z):
        received.append([x is a, y is b, z is c])
        return (x * y * z).sin()

    ckpt.checkpoint(region, a, b, c).sum().backward()
    assert len(received) > 1, "the region was not re-invoked in backward: there is no recompute to look at"
    for call, same in enumerate(received[1:], 1):
        copies = [kind for kind, is_same in zip(kinds, same) if not is_same]
        assert not copies, f"recompute {call} received copies of {copies}, not the tensors the caller passed"


class _SavesSecondArgument(torch.autograd.Function):
    """x * y, saving y; its backward hands what ctx.saved_tensors gave back to ``seen``."""

    @staticmethod
    def forward(ctx, x, y, seen):
        ctx.seen = seen
        ctx.save_for_backward(y)
        return x * y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors  # read once: torch's non-reentrant variant refuses a second read
        ctx.seen.append(y)
        return grad * y, None, None


@pytest.mark.clause("inputs.non-reentrant-recompute-gets-the-passed-tensors")
def test_custom_function_inside_gets_back_the_very_argument_it_saved(ckpt):
    def saved_in_backward(call):
        x, y, seen = leaf(seed=1), leaf(seed=2, requires_grad=False), []
        call(lambda a, b: _SavesSecondArgument.apply(a, b, seen), x, y).sum().backward()
        assert len(seen) == 1, f"the custom Function's backward ran {len(seen)} times, expected once"
        return seen[0] is y

    assert saved_in_backward(lambda function, *args: function(*args)), (
        "probe check: without checkpoint, ctx.saved_tensors gives back the argument object itself")
    assert saved_in_backward(ckpt.checkpoint), (
        "the custom Function inside the region saved the argument y (which does not require grad), but in "
        "backward ctx.saved_tensors gave back another tensor object, not y")
