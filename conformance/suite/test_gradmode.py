"""Grad mode inside the checkpointed function, in the forward and in the recompute (clauses gradmode.*)."""

import pytest
import torch

from conformance.testing.assertions import assert_same_forward, assert_same_gradients
from conformance.fixtures.inputs import leaf, twin_leaves


def grad_mode_recorder(modes):
    def fn(x):
        modes.append(torch.is_grad_enabled())
        return x.sin().exp()

    return fn


@pytest.mark.clause("gradmode.reentrant-forward-no-grad")
def test_reentrant_forward_runs_under_no_grad(ckpt):
    x, _ = twin_leaves()
    modes = []
    out = ckpt.checkpoint(grad_mode_recorder(modes), x)
    assert modes == [False], f"grad mode seen by the reentrant forward: {modes} (expected [False]: no_grad)"
    assert out.requires_grad, "the output of the reentrant checkpoint must still require grad"


@pytest.mark.clause("gradmode.reentrant-forward-no-grad")
def test_reentrant_forward_records_no_graph_inside(ckpt):
    x, _ = twin_leaves()
    inside = []

    def fn(t):
        inner = t.sin()
        inside.append(inner.requires_grad)
        return inner.exp()

    ckpt.checkpoint(fn, x)
    assert inside == [False], "an intermediate inside the reentrant forward requires grad: a graph was recorded"


def grad_inside(t):
    """Performs a backward on a graph built inside the region, and uses its result."""
    inner = (t**3).sum()
    (g,) = torch.autograd.grad(inner, t)
    return t.sin() * g


def gradient_penalty_inside(t):
    """A gradient the outer backward differentiates again (create_graph=True: a gradient penalty)."""
    (g,) = torch.autograd.grad((t**3).sum(), t, create_graph=True)
    return t.sin() * g


def backward_inside(t):
    """Tensor.backward on a graph of the region's own, from a leaf made inside it."""
    w = t.detach().requires_grad_()
    (w**3).sum().backward()
    return t.sin() * w.grad


# The "inner backward" dimension: the ways of running backward inside the region.
INNER_BACKWARDS = {"autograd.grad": grad_inside, "autograd.grad-create-graph": gradient_penalty_inside,
                   "Tensor.backward": backward_inside}


@pytest.mark.clause("gradmode.non-reentrant-records-graph")
@pytest.mark.parametrize("inner", INNER_BACKWARDS)
def test_non_reentrant_allows_backward_inside_the_region(ckpt, inner):
    function = INNER_BACKWARDS[inner]
    x, x_ref = twin_leaves()
    out = ckpt.checkpoint(function, x)
    expected = function(x_ref)
    assert_same_forward(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_same_gradients(x.grad, x_ref.grad, ["x.grad"])


@pytest.mark.clause("gradmode.non-reentrant-records-graph")
def test_non_reentrant_forward_sees_grad_enabled(ckpt):
    x, _ = twin_leaves()
    modes = []
    ckpt.checkpoint(grad_mode_recorder(modes), x)
    assert modes == [True], f"grad mode seen by the non-reentrant forward: {modes} (expected the caller's, True)"


@pytest.mark.clause("gradmode.recompute-grad-enabled")
@pytest.mark.parametrize("backward_mode", ["enable_grad", "no_grad"])
def test_recompute_runs_with_grad_enabled(ckpt, backward_mode):
    x, x_ref = twin_leaves()
    modes = []
    loss = ckpt.checkpoint(grad_mode_recorder(modes), x).sum()
    forward_calls = len(modes)
    # The engine computes gradients whatever the caller's grad mode; the recompute must build its graph.
    with getattr(torch, backward_mode)():
        loss.backward()
    grad_mode_recorder([])(x_ref).sum().backward()
    recompute = modes[forward_calls:]
    assert recompute, "the function was not re-run in backward"
    assert all(recompute), f"grad mode seen by the recompute: {recompute} (backward called under {backward_mode})"
    assert_same_gradients(x.grad, x_ref.grad, ["x.grad"])


class InnerBackward:
    """A backward on a graph of its own (which saves t) inside the function, counted in `inner_runs`.

    where="after-last-save": after exp, the last op saving for the outer graph, so only a recompute
    that runs the whole function re-runs it. where="before-later-saves": sin and mul save after it, so
    with early stop off the forward's own inner backward meets saves the region has not made yet.
    """

    def __init__(self, where):
        self.where, self.inner_runs = where, 0

    def __call__(self, t):
        last_save_first = self.where == "after-last-save"
        y = t.exp() if last_save_first else None
        (g,) = torch.autograd.grad((t**3).sum(), t)  # g is a constant for the outer graph
        self.inner_runs += 1
        return y + g if last_save_first else t.sin() * g  # the add saves nothing; sin and mul save


@pytest.mark.clause("gradmode.inner-backward-full-recompute")
@pytest.mark.parametrize("where", ["after-last-save", "before-later-saves"])
def test_backward_inside_the_region_with_early_stop_off(ckpt, where):
    fn = InnerBackward(where)
    x, x_ref = twin_leaves()
    out = ckpt.checkpoint(fn, x, early_stop=False)
    forward_runs = fn.inner_runs
    expected = InnerBackward(where)(x_ref)
    assert_same_forward(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert fn.inner_runs > forward_runs, "early_stop=False, yet the recompute did not reach the inner backward"
    assert_same_gradients(x.grad, x_ref.grad, ["x.grad"])


# ---- torch's test_checkpointing_without_reentrant_parameter_used_in_an_out and
# ---- test_nested_checkpoint_same_graph (docs/UPSTREAM_TESTS.md) ----

def _plain_call(function, *args):
    return function(*args)


@pytest.mark.clause("gradmode.non-reentrant-hooks-fire-once")
def test_hook_on_a_tensor_used_inside_and_outside_the_region_fires_once_per_backward(ckpt):
    def hook_calls(call):
        w, x, fired = leaf(seed=3), leaf(seed=4), []
        w.register_hook(lambda grad: fired.append(grad))
        call(lambda t: w * t, w * x).sum().backward()  # w used outside the region, then inside it
        return len(fired)

    expected, actual = hook_calls(_plain_call), hook_calls(ckpt.checkpoint)
    assert actual == expected, (f"a hook on a tensor the region uses, also outside it, fired {actual} times in "
                                f"one backward; {expected} without checkpoint")


@pytest.mark.clause("gradmode.non-reentrant-hooks-fire-once")
def test_hook_the_function_registers_on_a_tensor_it_computes_fires_once_per_backward(ckpt):
    def hook_calls(call):
        fired = []

        def region(x):
            h = x.sin()
            h.register_hook(lambda grad: fired.append(grad))
            return h.cos()

        call(region, leaf()).sum().backward()
        return len(fired)

    expected, actual = hook_calls(_plain_call), hook_calls(ckpt.checkpoint)
    assert actual == expected, (f"a hook the function registered on a tensor it computes fired {actual} times in "
                                f"one backward; {expected} without checkpoint")
