"""RNG state preservation (clauses rng.*).

Every comparison runs the same scenario twice from the same explicit seed: once plainly (the
reference) and once checkpointed. Dropout makes a wrong RNG state visible in the forward value, in
the gradients (the recompute's masks), and in the stream of numbers drawn after backward.
"""

from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F

from conformance.testing.assertions import assert_rng_stream_unchanged
from conformance.testing.assertions import assert_same_forward, assert_same_gradients
from conformance.fixtures.inputs import OPTIONS, leaf, options_for, twin_leaves
from conformance.fixtures.models import mlp, twins

SEED = 1234
P = 0.5  # dropout probability: a wrong mask changes about half the activations


def _region(ckpt, function, *args):
    """function(*args), through checkpoint when ckpt is given, plainly when it is None."""
    return function(*args) if ckpt is None else ckpt.checkpoint(function, *args)


# Scenarios: build models and input from fixed seeds (the global RNG untouched), run the forward,
# return (output, the leaves whose gradients must match).

def one_region(ckpt, device):
    model, x = mlp(dropout=P, device=device), leaf(device=device)
    return _region(ckpt, model, x), [x, *model.parameters()]


def stacked_regions(ckpt, device):
    models = [mlp(dropout=P, seed=seed, device=device) for seed in range(3)]
    x = leaf(device=device)
    h = _region(ckpt, models[0], x)
    h = F.dropout(h, P)  # a draw outside any region, between two regions
    for model in models[1:]:
        h = _region(ckpt, model, h)
    return h, [x, *(p for m in models for p in m.parameters())]


def sequential(ckpt, device):
    model, x = mlp(depth=4, dropout=P, device=device), leaf(device=device)  # 12 functions, dropout in each segment
    functions = list(model.children())
    return (model(x) if ckpt is None else ckpt.sequential(functions, 3, x)), [x, *model.parameters()]


SCENARIOS = [pytest.param(s, id=s.__name__.replace("_", "-")) for s in (one_region, stacked_regions, sequential)]


@dataclass
class Run:
    output: torch.Tensor
    grads: list


def draw_between_passes(device):
    """Random draws the program makes between forward and backward (another model's dropout, say)."""
    torch.rand(100)
    torch.rand(100, device=device)


def run(scenario, ckpt, device, *, draws_between=False, backward=True):
    """One run of scenario from SEED (torch.manual_seed seeds the CPU and every device generator)."""
    torch.manual_seed(SEED)
    output, leaves = scenario(ckpt, device)
    if not backward:
        return Run(output.detach(), [])
    if draws_between:
        draw_between_passes(device)
    output.sum().backward()
    return Run(output.detach(), [t.grad for t in leaves])


def next_draws(device):
    """The next numbers of the CPU stream and of the device's stream."""
    return [(torch.rand(16), "cpu")] + ([(torch.rand(16, device=device), device)] if device != "cpu" else [])


# ------------------------------------------------------------------------- preserve_rng_state=True

@pytest.mark.clause("rng.same-forward")
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_dropout_output_equals_the_uncheckpointed_run_from_the_same_seed(ckpt, device, scenario):
    expected = run(scenario, None, device, backward=False)
    actual = run(scenario, ckpt, device, backward=False)
    assert_same_forward(actual.output, expected.output)


@pytest.mark.clause("rng.same-gradients")
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_dropout_gradients_equal_the_uncheckpointed_run_from_the_same_seed(ckpt, device, scenario):
    expected = run(scenario, None, device)
    actual = run(scenario, ckpt, device)
    assert_same_gradients(actual.grads, expected.grads)


@pytest.mark.clause("rng.draws-between-passes")
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_draws_between_forward_and_backward_do_not_change_the_gradients(ckpt, device, scenario):
    expected = run(scenario, None, device, draws_between=True)
    actual = run(scenario, ckpt, device, draws_between=True)
    assert_same_gradients(actual.grads, expected.grads)


@pytest.mark.clause("rng.stream-restored")
@pytest.mark.parametrize("draws_between", [False, True], ids=["backward-right-after-forward", "draws-between-passes"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_rng_stream_after_backward_is_the_one_the_uncheckpointed_run_sees(ckpt, device, scenario, draws_between):
    run(scenario, None, device, draws_between=draws_between)
    expected = next_draws(device)
    run(scenario, ckpt, device, draws_between=draws_between)
    for draw, on in expected:
        assert_rng_stream_unchanged(draw, device=on)


# ------------------------------------------------------------------------ preserve_rng_state=False

def _entry(ckpt, entry, model, x, **kwargs):
    if entry == "checkpoint":
        return ckpt.checkpoint(model, x, **kwargs)
    return ckpt.sequential(list(model.children()), 2, x, **kwargs)


ENTRIES = ["checkpoint", "checkpoint_sequential"]


@pytest.mark.clause("rng.no-preserve")
@pytest.mark.parametrize("entry", ENTRIES)
def test_without_preserving_rng_state_the_forward_value_is_still_the_functions(ckpt, device, entry):
    model, x = mlp(dropout=P, device=device), leaf(device=device)
    torch.manual_seed(SEED)
    expected = model(x)
    torch.manual_seed(SEED)
    actual = _entry(ckpt, entry, model, x, preserve_rng_state=False)
    assert_same_forward(actual, expected)


@pytest.mark.clause("rng.no-preserve")
@pytest.mark.parametrize("entry", ENTRIES)
def test_without_preserving_rng_state_a_deterministic_function_gets_exact_gradients(ckpt, device, entry):
    model, reference = twins(mlp(depth=3, device=device))
    x, reference_x = twin_leaves(device=device)
    _entry(ckpt, entry, model, x, preserve_rng_state=False).sum().backward()
    reference(reference_x).sum().backward()
    assert_same_gradients([x.grad, *(p.grad for p in model.parameters())],  # no random draws here: a difference is the gradients'
                    [reference_x.grad, *(p.grad for p in reference.parameters())])


# ------------------------------------------------------------------------------- device RNG states

def _device_dropout(x, others):
    """Dropout on the device of others[0]; x may live on the CPU (then only the nested tensor is on the device)."""
    y = others[0]
    return F.dropout(x.to(y.device) * y, P)


def _device_scenario(placement):
    def scenario(ckpt, device):
        y = leaf(device=device, seed=2, requires_grad=False)
        x = leaf(device=device if placement == "top-level" else "cpu", requires_grad=True)
        return _region(ckpt, _device_dropout, x, [y]), [x]
    return scenario


@pytest.mark.clause("rng.device-states")
@pytest.mark.parametrize("placement", ["top-level", "nested"], ids=["device-tensor-top-level", "device-tensor-nested"])
def test_device_rng_state_of_the_tensor_arguments_is_replayed_and_restored(ckpt, device, placement):
    if device == "cpu":
        pytest.skip("the clause concerns the RNG state of non-CPU devices; "
                    "the CPU state is checked by rng.same-gradients")
    scenario = _device_scenario(placement)
    expected = run(scenario, None, device, draws_between=True)
    expected_draws = next_draws(device)
    actual = run(scenario, ckpt, device, draws_between=True)
    assert_same_forward(actual.output, expected.output)
    assert_same_gradients(actual.grads, expected.grads, ["gradient of x"])
    for draw, on in expected_draws:
        assert_rng_stream_unchanged(draw, device=on)


# ------------------------------------------------- every kind of random draw, options omitted or explicit

# name -> a function of x that draws random numbers of that kind; the draws reach value and gradient.
RANDOM_OPS = {
    "dropout": lambda x: F.dropout(x.tanh(), P) * x,
    "rand_like": lambda x: x.sin() * torch.rand_like(x) + x,
    "bernoulli": lambda x: x.exp() * torch.bernoulli(torch.full_like(x, 0.5)),
}


def _random_run(ckpt, device, random_op, options="omitted"):
    x = leaf(device=device)
    torch.manual_seed(SEED)
    function = RANDOM_OPS[random_op]
    output = function(x) if ckpt is None else ckpt.checkpoint(function, x, **options_for(ckpt, options))
    (output * output).sum().backward()
    return Run(output.detach(), [x.grad])


@pytest.mark.clause("rng.same-forward")
@pytest.mark.parametrize("random_op", RANDOM_OPS)
def test_every_kind_of_random_draw_gives_the_uncheckpointed_output(ckpt, device, random_op):
    assert_same_forward(_random_run(ckpt, device, random_op).output, _random_run(None, device, random_op).output)


@pytest.mark.clause("rng.same-gradients")
@pytest.mark.parametrize("random_op", RANDOM_OPS)
def test_every_kind_of_random_draw_gives_the_uncheckpointed_gradients(ckpt, device, random_op):
    assert_same_gradients(_random_run(ckpt, device, random_op).grads, _random_run(None, device, random_op).grads, ["x.grad"])


@pytest.mark.clause("rng.same-forward")
@pytest.mark.parametrize("options", OPTIONS)
def test_random_draws_are_replayed_in_the_forward_with_options_omitted_or_explicitly_default(ckpt, device, options):
    actual, expected = _random_run(ckpt, device, "dropout", options), _random_run(None, device, "dropout")
    assert_same_forward(actual.output, expected.output)


@pytest.mark.clause("rng.same-gradients")
@pytest.mark.parametrize("options", OPTIONS)
def test_random_draws_are_replayed_in_the_recompute_with_options_omitted_or_explicitly_default(ckpt, device, options):
    actual, expected = _random_run(ckpt, device, "dropout", options), _random_run(None, device, "dropout")
    assert_same_gradients(actual.grads, expected.grads, ["x.grad"])
