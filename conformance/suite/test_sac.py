"""Selective activation checkpointing (clauses sac.*), through the implementation's own
create_selective_checkpoint_contexts and CheckpointPolicy.

Which ops really run during backward is counted with a dispatch mode. The function is
sin -> exp -> tanh: the gradient formulas call cos, mul and tanh_backward but never sin or exp, so
a sin or exp seen during backward is a recompute.
"""

import functools

import pytest
import torch

from conformance.assertions import assert_same_forward, assert_same_gradients
from conformance.fixtures.inputs import leaf, twin_leaves
from conformance.fixtures.probes import OpCounter

aten = torch.ops.aten


def sin_exp_tanh(x):
    return x.sin().exp().tanh()


def policy_saving_sin(ckpt, save, recompute):
    """A policy function: `save` for sin, `recompute` for every other op."""

    def policy(ctx, op, *args, **kwargs):
        return getattr(ckpt.CheckpointPolicy, save if op == aten.sin.default else recompute)

    return policy


def ops_run_in_backward(ckpt, policy_or_list):
    context_fn = functools.partial(ckpt.create_selective_checkpoint_contexts, policy_or_list)
    out = ckpt.checkpoint(sin_exp_tanh, leaf(), context_fn=context_fn)
    with OpCounter() as counter:
        out.sum().backward()
    return counter.counts


def two_matmuls(x, y):
    """The docstring's example."""
    return torch.sigmoid(torch.matmul(torch.matmul(x, y), y)) * y


@pytest.mark.clause("sac.same-gradients")
@pytest.mark.parametrize("form", ["policy", "list"])
def test_selective_checkpoint_gives_uncheckpointed_gradients(ckpt, form):
    def policy(ctx, op, *args, **kwargs):
        return ckpt.CheckpointPolicy.MUST_SAVE if op == aten.mm.default else ckpt.CheckpointPolicy.PREFER_RECOMPUTE

    policy_or_list = policy if form == "policy" else [aten.mm.default]
    context_fn = functools.partial(ckpt.create_selective_checkpoint_contexts, policy_or_list)
    (x, x_ref), (y, y_ref) = twin_leaves(8, 8, seed=1), twin_leaves(8, 8, seed=2)
    out = ckpt.checkpoint(two_matmuls, x, y, context_fn=context_fn)
    expected = two_matmuls(x_ref, y_ref)
    assert_same_forward(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_same_gradients([x.grad, y.grad], [x_ref.grad, y_ref.grad], ["x gradient", "y gradient"])


@pytest.mark.clause("sac.save-not-recomputed")
@pytest.mark.parametrize("save", ["MUST_SAVE", "PREFER_SAVE"])
def test_saved_op_is_not_recomputed(ckpt, save):
    counts = ops_run_in_backward(ckpt, policy_saving_sin(ckpt, save, "PREFER_RECOMPUTE"))
    assert counts["sin"] == 0, f"sin has policy {save} but ran {counts['sin']} times during backward"


@pytest.mark.clause("sac.recompute-recomputed")
@pytest.mark.parametrize("recompute", ["MUST_RECOMPUTE", "PREFER_RECOMPUTE"])
def test_recompute_ops_are_recomputed(ckpt, recompute):
    counts = ops_run_in_backward(ckpt, policy_saving_sin(ckpt, "MUST_SAVE", recompute))
    assert counts["exp"] >= 1, f"exp has policy {recompute} but was not recomputed during backward ({dict(counts)})"


@pytest.mark.clause("sac.op-list")
def test_op_list_saves_listed_and_recomputes_others(ckpt):
    counts = ops_run_in_backward(ckpt, [aten.sin.default])
    assert counts["sin"] == 0, f"sin is listed (MUST_SAVE) but ran {counts['sin']} times during backward"
    assert counts["exp"] >= 1, f"exp is not listed (PREFER_RECOMPUTE) but was not recomputed ({dict(counts)})"
