"""Selective activation checkpointing (clauses sac.*), through the implementation's own
create_selective_checkpoint_contexts and CheckpointPolicy.

Which ops really run during backward is counted with a dispatch mode. The function is
sin -> exp -> sin -> tanh -> sin: the gradient formulas call cos, mul and tanh_backward but never sin or
exp, so a sin or exp seen during backward is a recompute; sin runs three times, so that every call of a
saved op must be answered from the cache, each by its own output.
"""

import functools

import pytest
import torch

from conformance.testing.assertions import ANY_ERROR, assert_same_forward, assert_same_gradients, satisfies
from conformance.fixtures import custom_ops
from conformance.fixtures.inputs import leaf, twin_leaves
from conformance.fixtures.probes import OpCounter

aten = torch.ops.aten

# The CheckpointPolicy values, by kind (the "save policy", "recompute policy", "offload policy" dimensions).
SAVE_POLICIES = ("MUST_SAVE", "PREFER_SAVE")
RECOMPUTE_POLICIES = ("MUST_RECOMPUTE", "PREFER_RECOMPUTE")
OFFLOAD_POLICIES = ("MUST_CPU_OFFLOAD", "PREFER_CPU_OFFLOAD")
CHECKPOINT_POLICIES = SAVE_POLICIES + RECOMPUTE_POLICIES + OFFLOAD_POLICIES


def sin_exp_tanh(x):
    return x.sin().exp().sin().tanh().sin()


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


@pytest.mark.clause("sac.same-gradients")
@pytest.mark.parametrize("policy", SAVE_POLICIES + OFFLOAD_POLICIES)
def test_op_saved_at_each_of_its_calls_gives_uncheckpointed_gradients(ckpt, policy):
    """sin runs three times, each call saved: each recomputed use must get its own call's output."""
    context_fn = functools.partial(ckpt.create_selective_checkpoint_contexts,
                                   policy_saving_sin(ckpt, policy, "PREFER_RECOMPUTE"))
    x, x_ref = twin_leaves(4, 6, seed=3)
    out = ckpt.checkpoint(sin_exp_tanh, x, context_fn=context_fn)
    expected = sin_exp_tanh(x_ref)
    assert_same_forward(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_same_gradients(x.grad, x_ref.grad, ["input gradient"])


def sorted_then_scaled(x):
    """An op with several outputs (sort: values and indices), then a second call of the same op."""
    values, indices = torch.sort(x, dim=-1)
    again, _ = torch.sort(values.exp(), dim=0)
    return again * indices.to(x.dtype)


@pytest.mark.clause("sac.same-gradients")
@pytest.mark.parametrize("saved", ["first-call", "every-call"])
def test_saved_op_with_several_outputs_gives_uncheckpointed_gradients(ckpt, saved):
    """The policy speaks of ops, and an op may return several tensors (values and indices): each output of
    a saved call is what the recompute must use, the n-th call of the op its own saved outputs."""
    calls = []

    def policy(ctx, op, *args, **kwargs):
        if op.overloadpacket != aten.sort:
            return ckpt.CheckpointPolicy.PREFER_RECOMPUTE
        calls.append(op)
        save = saved == "every-call" or len(calls) % 2 == 1
        return ckpt.CheckpointPolicy.MUST_SAVE if save else ckpt.CheckpointPolicy.PREFER_RECOMPUTE

    context_fn = functools.partial(ckpt.create_selective_checkpoint_contexts, policy)
    x, x_ref = twin_leaves(4, 6, seed=3)
    out = ckpt.checkpoint(sorted_then_scaled, x, context_fn=context_fn)
    expected = sorted_then_scaled(x_ref)
    assert_same_forward(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_same_gradients([x.grad], [x_ref.grad], ["x gradient"])


def saved_rand_then_random_ops(x, generator):
    """A random op whose output the policy saves (drawn from `generator`, or the default one), then random
    ops the recompute runs again (dropout, rand) from the default generator."""
    noisy = x * torch.rand(x.shape, generator=generator)
    return torch.nn.functional.dropout(noisy.sin(), 0.5) * torch.rand(x.shape)


@pytest.mark.clause("sac.same-gradients")
@pytest.mark.parametrize("generator", ["default", "explicit"])
def test_saved_random_op_leaves_the_recomputed_draws_as_in_the_forward(ckpt, generator):
    """Selective checkpointing is used "with torch.utils.checkpoint.checkpoint", whose recompute replays
    the forward's random draws (preserve_rng_state defaults to True): a saved random op does not run in the
    recompute, yet the random ops after it must draw what they drew in the forward, as if it had."""
    saved = []  # the saved call: the first rand

    def policy(ctx, op, *args, **kwargs):
        if op.overloadpacket == aten.rand and not saved:
            saved.append(op)
            return ckpt.CheckpointPolicy.MUST_SAVE
        return ckpt.CheckpointPolicy.PREFER_RECOMPUTE

    explicit = torch.Generator().manual_seed(5) if generator == "explicit" else None
    context_fn = functools.partial(ckpt.create_selective_checkpoint_contexts, policy)
    x, x_ref = twin_leaves(4, 6, seed=3)
    torch.manual_seed(11)
    out = ckpt.checkpoint(saved_rand_then_random_ops, x, explicit, context_fn=context_fn)
    out.sum().backward()
    torch.manual_seed(11)
    if explicit is not None:
        explicit.manual_seed(5)
    expected = saved_rand_then_random_ops(x_ref, explicit)
    expected.sum().backward()
    assert saved, "the policy never saw the random op rand"
    assert_same_forward(out, expected)
    assert_same_gradients([x.grad], [x_ref.grad], ["x gradient (dropout mask and rand drawn again in the recompute)"])


@pytest.mark.clause("sac.bool-policy")
@pytest.mark.parametrize("answer", [True, False])
def test_policy_answering_a_bool_saves_on_true_and_recomputes_on_false(ckpt, answer):
    def policy(ctx, op, *args, **kwargs):
        return answer if op == aten.sin.default else False

    counts = ops_run_in_backward(ckpt, policy)
    if answer:
        assert counts["sin"] == 0, f"the policy answered True for sin but sin ran {counts['sin']} times in backward"
    else:
        assert counts["sin"] >= 1, f"the policy answered False for sin but sin was not recomputed ({dict(counts)})"


@pytest.mark.clause("sac.bad-argument-rejected")
@pytest.mark.parametrize("argument", ["op-packet-in-list", "neither-list-nor-callable"])
def test_bad_policy_argument_is_rejected_when_the_contexts_are_made(ckpt, argument):
    bad, error = ([aten.sin], ValueError) if argument == "op-packet-in-list" else (aten.sin.default.name(), TypeError)
    with pytest.raises(error):
        ckpt.create_selective_checkpoint_contexts(bad)


def assert_sin_not_recomputed(ckpt, policy):
    counts = ops_run_in_backward(ckpt, policy_saving_sin(ckpt, policy, "PREFER_RECOMPUTE"))
    assert counts["sin"] == 0, f"sin has policy {policy} but ran {counts['sin']} times during backward"


@pytest.mark.clause("sac.save-not-recomputed")
@pytest.mark.parametrize("policy", SAVE_POLICIES)
def test_saved_op_is_not_recomputed(ckpt, policy):
    assert_sin_not_recomputed(ckpt, policy)


@pytest.mark.clause("sac.offload-not-recomputed")
@pytest.mark.parametrize("policy", OFFLOAD_POLICIES)
def test_offloaded_op_is_not_recomputed(ckpt, policy):
    assert_sin_not_recomputed(ckpt, policy)


@pytest.mark.clause("sac.recompute-recomputed")
@pytest.mark.parametrize("policy", RECOMPUTE_POLICIES)
def test_recompute_ops_are_recomputed(ckpt, policy):
    counts = ops_run_in_backward(ckpt, policy_saving_sin(ckpt, "MUST_SAVE", policy))
    assert counts["exp"] >= 1, f"exp has policy {policy} but was not recomputed during backward ({dict(counts)})"


@pytest.mark.clause("sac.op-list")
def test_op_list_saves_listed_and_recomputes_others(ckpt):
    counts = ops_run_in_backward(ckpt, [aten.sin.default])
    assert counts["sin"] == 0, f"sin is listed (MUST_SAVE) but ran {counts['sin']} times during backward"
    assert counts["exp"] >= 1, f"exp is not listed (PREFER_RECOMPUTE) but was not recomputed ({dict(counts)})"


def sin_gelu_scaled(t):
    """Three ops whose arguments a policy can read: a tensor (sin), a keyword (gelu), a number (mul)."""
    return torch.mul(torch.nn.functional.gelu(t.sin(), approximate="tanh"), 2.5)


@pytest.mark.clause("sac.policy-arguments")
def test_policy_function_receives_each_ops_arguments(ckpt):
    seen = {}  # op name -> the positional arguments of its first call, and its keyword arguments

    def recording_policy(ctx, op, *args, **kwargs):
        seen.setdefault(op.overloadpacket.__name__, (args, kwargs))
        return ckpt.CheckpointPolicy.PREFER_RECOMPUTE

    x = leaf()
    context_fn = functools.partial(ckpt.create_selective_checkpoint_contexts, recording_policy)
    ckpt.checkpoint(sin_gelu_scaled, x, context_fn=context_fn).sum().backward()
    assert {"sin", "gelu", "mul"} <= set(seen), f"the policy was not asked about sin, gelu and mul: {sorted(seen)}"
    (sin_args, _), (_, gelu_kwargs), (mul_args, _) = seen["sin"], seen["gelu"], seen["mul"]
    assert len(sin_args) == 1 and isinstance(sin_args[0], torch.Tensor) and torch.equal(sin_args[0], x.detach()), (
        f"the policy was not given sin's argument, the region's input: {sin_args!r}")
    assert gelu_kwargs.get("approximate") == "tanh", f"the policy was not given gelu's kwargs (approximate='tanh'): {gelu_kwargs!r}"
    assert len(mul_args) == 2 and float(mul_args[1]) == 2.5, (  # 2.5 may come as a 0-dim tensor
        f"the policy was not given mul's arguments (gelu's output, 2.5): {mul_args!r}")


@pytest.mark.clause("sac.policy-forward-only")
@pytest.mark.parametrize("policy", CHECKPOINT_POLICIES)
def test_policy_is_called_during_the_forward_only(ckpt, policy):
    is_recompute = []  # what each call's SelectiveCheckpointContext said
    answer = policy_saving_sin(ckpt, policy, "PREFER_RECOMPUTE")

    def recording_policy(ctx, op, *args, **kwargs):
        is_recompute.append(ctx.is_recompute)
        return answer(ctx, op, *args, **kwargs)

    context_fn = functools.partial(ckpt.create_selective_checkpoint_contexts, recording_policy)
    out = ckpt.checkpoint(sin_exp_tanh, leaf(), context_fn=context_fn)
    in_forward = len(is_recompute)
    out.sum().backward()  # recomputes exp and tanh at least
    assert in_forward, "the policy function was never called during the forward pass"
    assert len(is_recompute) == in_forward, (
        f"the policy function was called {len(is_recompute) - in_forward} times during backward; it is only "
        "called during the forward pass")
    assert not any(is_recompute), "a SelectiveCheckpointContext said is_recompute=True; it is always False"


MUTATED_BY = ("function", "caller")  # the "cache mutation" dimension: who changes sin's cached output in place


def doubles_sin_inside(t):
    """sin, exp of it, then sin's output doubled in place: legal without checkpointing (exp saves its
    result, not its input), but it changes what selective checkpointing cached for sin."""
    s = t.sin()
    y = s.exp()
    s.mul_(2)
    return y + s


def sin_and_exp(t):
    s = t.sin()
    return s, s.exp()


def loss_after_cached_sin_changed(call, mutated_by, x):
    """call(function, x) runs a region whose sin output is then changed in place, by the function itself
    or by the caller on the returned tensor; returns the loss to run backward on."""
    if mutated_by == "function":
        return call(doubles_sin_inside, x).sum()
    s, y = call(sin_and_exp, x)
    with torch.no_grad():
        s.mul_(2)
    return y.sum()


def saving_sin(ckpt, **options):
    """call(function, x): checkpoint with sin's output cached by an op list."""
    context_fn = functools.partial(ckpt.create_selective_checkpoint_contexts, [aten.sin.default], **options)
    return lambda function, x: ckpt.checkpoint(function, x, context_fn=context_fn)


def uncheckpointed(function, x):
    return function(x)


@pytest.mark.clause("sac.cache-mutation-detected")
@pytest.mark.parametrize("mutated_by", MUTATED_BY)
def test_changed_cache_entry_is_never_used_silently(ckpt, mutated_by):
    x, x_ref = twin_leaves()
    try:
        loss_after_cached_sin_changed(saving_sin(ckpt), mutated_by, x).backward()
    except Exception as raised:  # noqa: BLE001  (the docs name no type: any error but a crash)
        if not satisfies(raised, ANY_ERROR):
            raise
        return  # the documented error, at the change or at backward
    # No error: only an implementation that cached a copy the change cannot reach may stay silent.
    loss_after_cached_sin_changed(uncheckpointed, mutated_by, x_ref).backward()
    assert_same_gradients(x.grad, x_ref.grad, [f"x.grad (no error, though the {mutated_by} changed a cached tensor)"])


@pytest.mark.clause("sac.cache-mutation-allowed")
@pytest.mark.parametrize("mutated_by", MUTATED_BY)
def test_changed_cache_entry_allowed_on_request(ckpt, mutated_by):
    x, _ = twin_leaves()
    # Must complete: with allow_cache_entry_mutation=True the check is disabled (the gradients then follow
    # whatever the recompute reads, and are not asserted).
    loss_after_cached_sin_changed(saving_sin(ckpt, allow_cache_entry_mutation=True), mutated_by, x).backward()
    assert x.grad is not None, "backward completed but x got no gradient"


# ---- torch's test_function_with_non_tensor_output (test_autograd.py): docs/UPSTREAM_TESTS.md ----

@pytest.mark.clause("sac.save-not-recomputed")
def test_saved_op_with_a_non_tensor_output_is_not_recomputed(ckpt):
    def region(x):
        y, scale = custom_ops.SIN_AND_SCALE(x)  # (sin(x), 2): a tensor and a Python int
        return (y * scale * x.sin().exp()).sin()

    context_fn = functools.partial(ckpt.create_selective_checkpoint_contexts, [custom_ops.SIN_AND_SCALE])
    out = ckpt.checkpoint(region, leaf(), context_fn=context_fn)
    custom_ops.CALLS.clear()
    out.sum().backward()
    assert not custom_ops.CALLS, (f"the op list saves the op returning (tensor, int), but its kernel ran "
                                  f"{len(custom_ops.CALLS)} times during backward")
