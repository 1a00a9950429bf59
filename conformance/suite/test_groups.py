"""GraphExecGroup (clauses groups.*): two backwards, one per output of a two-output region."""

import pytest
import torch

from conformance.assertions import assert_same_gradients
from conformance.fixtures.functions import Counted
from conformance.fixtures.inputs import twin_leaves


def two_disjoint_outputs(x, y):
    """Each output depends on one input only, so the two backwards cover disjoint parts."""
    return x.sin().exp(), y.cos().exp()


def gradients_in_two_backwards(ckpt, x, y, checkpointed=True):
    fn = Counted(two_disjoint_outputs)
    a, b = ckpt.checkpoint(fn, x, y) if checkpointed else fn(x, y)
    with ckpt.GraphExecGroup():
        if ckpt.use_reentrant:  # reentrant supports backward() only
            a.sum().backward(retain_graph=True)
            b.sum().backward()
            grads = [x.grad, y.grad]
        else:
            grads = [torch.autograd.grad(a.sum(), x)[0], torch.autograd.grad(b.sum(), y)[0]]
    return fn.calls, grads


@pytest.mark.clause("groups.recompute-at-most-once")
def test_group_recomputes_region_once(ckpt):
    (x, x_ref), (y, y_ref) = twin_leaves(seed=1), twin_leaves(seed=2)
    calls, grads = gradients_in_two_backwards(ckpt, x, y)
    _, expected = gradients_in_two_backwards(ckpt, x_ref, y_ref, checkpointed=False)
    assert_same_gradients(grads, expected, ["x gradient", "y gradient"])
    assert calls == 2, f"the region ran {calls} times for a forward and two backwards under one group, expected 2"


@pytest.mark.clause("groups.reentrant-noop")
def test_group_changes_nothing_for_reentrant(ckpt):
    (x, x_ref), (y, y_ref) = twin_leaves(seed=1), twin_leaves(seed=2)
    calls, grads = gradients_in_two_backwards(ckpt, x, y)
    _, expected = gradients_in_two_backwards(ckpt, x_ref, y_ref, checkpointed=False)
    assert_same_gradients(grads, expected, ["x gradient", "y gradient"])
    assert calls == 3, f"the region ran {calls} times for a forward and two reentrant backwards, expected 3 (no-op group)"
