"""How often a checkpointed region is recomputed (clauses recompute.*).

The functions save tensors for backward (sin_exp, Linear+Tanh), so even a non-reentrant early stop
has something to recompute: a recount of zero means the activations were kept, two means waste.
"""

import pytest

from conformance.testing.assertions import assert_same_forward, assert_same_gradients, parameter_grads
from conformance.fixtures.functions import Counted, sin_exp
from conformance.fixtures.inputs import twin_leaves
from conformance.fixtures.models import counted_stack


def assert_calls(counted, expected, when):
    assert counted.calls == expected, f"the checkpointed function was called {counted.calls} times {when}, expected {expected}"


@pytest.mark.clause("recompute.once-per-backward")
def test_region_is_recomputed_once(ckpt):
    fn = Counted(sin_exp)
    x, reference = twin_leaves()
    out = ckpt.checkpoint(fn, x)
    assert_calls(fn, 1, "by the forward")
    out.sum().backward()
    assert_calls(fn, 2, "after one backward (the forward plus one recompute)")
    sin_exp(reference).sum().backward()
    assert_same_gradients(x.grad, reference.grad, ["input gradient"])


@pytest.mark.clause("recompute.once-per-backward")
def test_each_of_several_regions_is_recomputed_once(ckpt):
    layers, _ = counted_stack(3)
    x, _ = twin_leaves()
    out = x
    for layer in layers:
        out = ckpt.checkpoint(layer, out)
    out.sum().backward()
    counts = [layer.calls for layer in layers]
    assert counts == [2, 2, 2], f"calls per region after forward and one backward: {counts}, expected one recompute each"
    assert all(g is not None for layer in layers for g in parameter_grads(layer))


@pytest.mark.clause("recompute.each-backward")
def test_every_backward_recomputes(ckpt):
    fn = Counted(sin_exp)
    x, _ = twin_leaves()
    out = ckpt.checkpoint(fn, x)
    out.sum().backward(retain_graph=True)
    assert_calls(fn, 2, "after the first backward")
    out.sum().backward()
    assert_calls(fn, 3, "after a second backward with retain_graph=True (one recompute per backward)")


# ---- torch's test_access_saved_tensor_twice_without_recomputation_works (test_autograd.py): docs/UPSTREAM_TESTS.md ----

@pytest.mark.clause("recompute.saved-tensor-read-outside-backward")
def test_a_saved_tensor_read_outside_backward_can_be_read_again_and_backward_still_works(ckpt):
    x, reference = twin_leaves()
    out = ckpt.checkpoint(sin_exp, x)
    expected = sin_exp(reference)
    first, second = out.grad_fn._saved_result, out.grad_fn._saved_result  # exp saves its result
    assert_same_forward([first, second], [expected.detach(), expected.detach()])
    out.sum().backward()
    expected.sum().backward()
    assert_same_gradients(x.grad, reference.grad, ["input gradient after the saved tensor was read twice"])
