"""GraphExecGroup (clauses groups.*): several backwards over disjoint parts of checkpointed regions."""

import gc

import pytest
import torch

from conformance.testing.assertions import assert_raises, assert_same_gradients
from conformance.fixtures.functions import Counted, sin_exp
from conformance.fixtures.inputs import twin_leaves

BACKWARDS = ("autograd.grad", "Tensor.backward")  # the "backward API" dimension


def two_disjoint_outputs(x, y):
    """Each output depends on one input only, so the two backwards cover disjoint parts."""
    return x.sin().exp(), y.cos().exp()


def gradient(output, leaf, backward, retain_graph=False):
    """The gradient of output.sum() for leaf, through the named backward API."""
    if backward == "autograd.grad":
        return torch.autograd.grad(output.sum(), leaf, retain_graph=retain_graph)[0]
    output.sum().backward(retain_graph=retain_graph)
    return leaf.grad


def gradients_in_two_backwards(ckpt, x, y, backward, checkpointed=True):
    """The region's call count and the gradients of x and y, from one backward per output under one group
    (the first retains the graph: the reentrant variant shares one node between the outputs)."""
    fn = Counted(two_disjoint_outputs)
    a, b = ckpt.checkpoint(fn, x, y) if checkpointed else fn(x, y)
    with ckpt.GraphExecGroup():
        grads = [gradient(a, x, backward, retain_graph=True), gradient(b, y, backward)]
    return fn.calls, grads


@pytest.mark.clause("groups.recompute-at-most-once")
@pytest.mark.parametrize("backward", BACKWARDS)
def test_group_recomputes_region_once(ckpt, backward):
    (x, x_ref), (y, y_ref) = twin_leaves(seed=1), twin_leaves(seed=2)
    calls, grads = gradients_in_two_backwards(ckpt, x, y, backward)
    _, expected = gradients_in_two_backwards(ckpt, x_ref, y_ref, backward, checkpointed=False)
    assert_same_gradients(grads, expected, ["x gradient", "y gradient"])
    assert calls == 2, f"the region ran {calls} times for a forward and two backwards ({backward}) under one group, expected 2"


@pytest.mark.clause("groups.recompute-at-most-once")
@pytest.mark.parametrize("backward", BACKWARDS)
def test_a_group_made_after_the_last_one_was_collected_recomputes_again(ckpt, backward):
    """The recompute is shared under one instance: a later one is another group, also where Python puts it at the
    address of a collected one (torch's upstream scenario: a new group made after the old one was collected)."""
    x, x_ref = twin_leaves()
    fn = Counted(sin_exp)
    out = ckpt.checkpoint(fn, x)
    grads = []
    for _ in range(2):
        x.grad = None
        with ckpt.GraphExecGroup():
            grads.append(gradient(out, x, backward, retain_graph=True))
        gc.collect()
    expected = torch.autograd.grad(sin_exp(x_ref).sum(), x_ref)[0]
    assert_same_gradients(grads, [expected, expected], ["first group's x gradient", "second group's x gradient"])
    assert fn.calls == 3, f"the region ran {fn.calls} times for a forward and a backward under each of two groups, expected 3"


@pytest.mark.clause("groups.recompute-at-most-once")
def test_group_recomputes_each_of_two_chained_regions_once(ckpt):
    (x, x_ref), (y, y_ref) = twin_leaves(seed=1), twin_leaves(seed=2)
    first, second = Counted(two_disjoint_outputs), Counted(two_disjoint_outputs)
    c, d = ckpt.checkpoint(second, *ckpt.checkpoint(first, x, y))
    with ckpt.GraphExecGroup():
        grads = [gradient(c, x, "autograd.grad", retain_graph=True), gradient(d, y, "autograd.grad")]
    c_ref, d_ref = two_disjoint_outputs(*two_disjoint_outputs(x_ref, y_ref))
    expected = [gradient(c_ref, x_ref, "autograd.grad"), gradient(d_ref, y_ref, "autograd.grad")]
    assert_same_gradients(grads, expected, ["x gradient", "y gradient"])
    calls = (first.calls, second.calls)
    assert calls == (2, 2), f"the two regions ran {calls} times for a forward and two backwards under one group, expected (2, 2)"


@pytest.mark.clause("groups.recompute-at-most-once")
def test_one_instance_entered_twice_is_one_group(ckpt):
    """"Under the same instance": two `with` blocks of one GraphExecGroup are one group."""
    (x, _), (y, _) = twin_leaves(seed=1), twin_leaves(seed=2)
    fn = Counted(two_disjoint_outputs)
    a, b = ckpt.checkpoint(fn, x, y)
    group = ckpt.GraphExecGroup()
    with group:
        gradient(a, x, "autograd.grad")
    with group:
        gradient(b, y, "autograd.grad")
    assert fn.calls == 2, f"the region ran {fn.calls} times for a forward and a backward in each of two blocks of one group, expected 2"


@pytest.mark.clause("groups.reentrant-noop")
def test_group_changes_nothing_for_reentrant(ckpt):
    (x, x_ref), (y, y_ref) = twin_leaves(seed=1), twin_leaves(seed=2)
    calls, grads = gradients_in_two_backwards(ckpt, x, y, "Tensor.backward")  # reentrant: backward() only
    _, expected = gradients_in_two_backwards(ckpt, x_ref, y_ref, "Tensor.backward", checkpointed=False)
    assert_same_gradients(grads, expected, ["x gradient", "y gradient"])
    assert calls == 3, f"the region ran {calls} times for a forward and two reentrant backwards, expected 3 (no-op group)"


@pytest.mark.clause("groups.overlap-rejected")
def test_overlapping_backwards_under_one_group_raise(ckpt):
    x, _ = twin_leaves()
    out = ckpt.checkpoint(sin_exp, x)
    with ckpt.GraphExecGroup():
        gradient(out, x, "autograd.grad", retain_graph=True)
        with assert_raises(ckpt.CheckpointError, "a CheckpointError for a second backward over the same saved "
                                                 "activations under one GraphExecGroup"):
            gradient(out, x, "autograd.grad")


@pytest.mark.clause("groups.nesting-rejected")
def test_nested_groups_are_rejected(ckpt):
    with ckpt.GraphExecGroup():
        with assert_raises(RuntimeError, "an error for a GraphExecGroup entered inside another"):
            with ckpt.GraphExecGroup():
                pass
