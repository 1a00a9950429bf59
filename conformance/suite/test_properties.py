"""Property-based differential tests: random small models, nested arguments, segment counts and seeds;
the checkpointed run must equal the un-checkpointed run from the same seed in what each clause promises.

Generated values are seeded specs (conformance/fixtures/strategies.py), so a falsifying example shrinks to a minimal
``Case(...)`` that is itself the reproducer; note() also prints a one-line command that re-runs it:

    python -c "from conformance.fixtures.strategies import *; from conformance.suite.test_properties import reproduce;
               reproduce('<impl>', '<variant>', '<check>', Case(...))"

What is generated follows what each variant promises. Reentrant: only top-level tensors take part in
autograd and keyword arguments are rejected, so in the shared properties the tensors that require grad
are top-level (nested ones carry data) and there are no keyword arguments. Non-reentrant: nested tensors
and keyword arguments take part too, each checked by its own property. Every example seeds torch from a
drawn integer (Case.seed) right before the forward, so a run depends on the example only.
Pick the number of examples with --hypothesis-profile (conformance/plugin/hypothesis_profiles.py).
"""

from __future__ import annotations

import shlex
import warnings
from dataclasses import dataclass

import pytest
import torch
from hypothesis import event, example, given, note
from hypothesis import strategies as st

from conformance.testing.assertions import (
    ANY_ERROR,
    assert_rejected,
    assert_rng_stream_unchanged,
    assert_same_forward,
    assert_same_gradients,
    assert_same_output,
)
from conformance.plugin.binding import Checkpointer, load_implementation
from conformance.fixtures import strategies
from conformance.fixtures.functions import STRUCTURES, tensors_in
from conformance.fixtures.inputs import options_for
from conformance.fixtures.strategies import Case, SequentialCase, loss_of, seeded_tensor

NEXT_DRAW = 5  # numbers drawn after backward to compare the RNG streams


# --------------------------------------------------------------------------------------------- runs

@dataclass
class Run:
    output: object
    grads: dict  # name -> .grad of every input and parameter that requires grad (None if it got none)


def run_region(case: Case, ckpt=None, *, backward=True, inputs_where=lambda leaf: True, parameters=True) -> Run:
    """One run of case from its seed: through ckpt's checkpoint (with case.options), or plain when ckpt is None."""
    model = case.model.build(case.dtype)
    inputs = case.build_inputs()
    region = case.region(model)
    torch.manual_seed(case.seed)
    if ckpt is None:
        output = region(*inputs.args, **inputs.kwargs)
    else:
        output = ckpt.checkpoint(region, *inputs.args, **options_for(ckpt, case.options), **inputs.kwargs)
    grads = {}
    if backward:
        for _ in range(case.draws_between):
            torch.rand(3)
        loss = loss_of(output)
        if loss.requires_grad:  # else every gradient stays None, and the comparison says which are missing
            loss.backward()
        grads = {f"gradient of {b.path}": b.tensor.grad for b in inputs.grad_leaves() if inputs_where(b)}
        if parameters:
            grads.update({f"gradient of parameter {n}": p.grad for n, p in model.named_parameters()})
    return Run(output, grads)


def run_sequential(case: SequentialCase, ckpt=None) -> Run:
    """One checkpoint_sequential run of case from its seed, or the functions run in order when ckpt is None."""
    layers = case.model.layers()
    functions = case.functions(layers)
    x = seeded_tensor((case.batch, case.model.width), requires_grad=case.input_grad, seed=case.seed)
    torch.manual_seed(case.seed)
    if ckpt is None:
        output = x
        for f in layers:
            output = f(output)
    else:
        explicit = case.options == "explicit-default" and "preserve_rng_state" in ckpt.impl.capabilities.features
        output = ckpt.sequential(functions, case.segments, x, **({"preserve_rng_state": True} if explicit else {}))
    loss = loss_of(output)
    if loss.requires_grad:
        loss.backward()
    grads = {"gradient of the input": x.grad} if case.input_grad else {}
    for i, layer in enumerate(layers):
        grads.update({f"gradient of function {i} {n}": p.grad for n, p in layer.named_parameters()})
    return Run(output, grads)


def assert_same_grads(actual: Run, expected: Run):
    assert list(actual.grads) == list(expected.grads)
    assert_same_gradients(list(actual.grads.values()), list(expected.grads.values()), list(expected.grads))


# ------------------------------------------------------------------------------------------- checks
# Plain functions of (ckpt, case), so that reproduce() can re-run them outside pytest.

def check_forward_value(ckpt: Checkpointer, case: Case):
    expected = run_region(case, backward=False)
    actual = run_region(case, ckpt, backward=False)
    assert_same_output(actual.output, expected.output)


def check_gradients(ckpt: Checkpointer, case: Case):
    expected = run_region(case)
    actual = run_region(case, ckpt)
    assert_same_grads(actual, expected)


def check_forward_value_and_gradients(ckpt: Checkpointer, case: Case):
    expected = run_region(case)
    actual = run_region(case, ckpt)
    assert_same_forward(actual.output, expected.output)
    assert_same_grads(actual, expected)


def check_rng_stream(ckpt: Checkpointer, case: Case):
    run_region(case)
    expected_next_draw = torch.rand(NEXT_DRAW)
    run_region(case, ckpt)
    assert_rng_stream_unchanged(expected_next_draw)


def check_nested_gradients(ckpt: Checkpointer, case: Case):
    nested = dict(inputs_where=lambda b: b.nested, parameters=False)  # the clause is about nested tensors only
    expected = run_region(case, **nested)
    actual = run_region(case, ckpt, **nested)
    assert_same_grads(actual, expected)


def check_nested_not_considered(ckpt: Checkpointer, case: Case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the 'no input requires grad' warning is reqgrad.reentrant-warns' business
        output = run_region(case, ckpt, backward=False).output
    assert not any(o.requires_grad for o in tensors_in(output)), (
        "an output requires grad although only nested tensors do: the reentrant variant considered them"
    )


def check_keyword_gradients(ckpt: Checkpointer, case: Case):
    keyword = dict(inputs_where=lambda b: b.keyword, parameters=False)  # the clause is about keyword arguments only
    expected = run_region(case, **keyword)
    actual = run_region(case, ckpt, **keyword)
    assert_same_forward(actual.output, expected.output)
    assert_same_grads(actual, expected)


def check_sequential(ckpt: Checkpointer, case: SequentialCase):
    expected = run_sequential(case)
    actual = run_sequential(case, ckpt)
    assert_same_forward(actual.output, expected.output)
    assert_same_grads(actual, expected)


def check_sequential_gradients(ckpt: Checkpointer, case: SequentialCase):
    expected = run_sequential(case)
    actual = run_sequential(case, ckpt)
    assert_same_grads(actual, expected)


def check_keywords_rejected(ckpt: Checkpointer, case: Case):
    inputs = case.build_inputs()
    region = case.region(case.model.build(case.dtype))
    # At the call or at backward, of any type: the docs fix neither (a Python signature raises TypeError).
    assert_rejected(ANY_ERROR, "an error for keyword arguments under the reentrant variant",
                    ckpt.checkpoint, region, *inputs.args, then=lambda output: loss_of(output).backward(), **inputs.kwargs)


def reproduce(impl: str, variant: str, check: str, case) -> None:
    """Re-run one check outside pytest (the one-liner note() prints calls this); raises on failure."""
    globals()[check](Checkpointer(load_implementation(impl), variant), case)
    print(f"{check} passed")


def reproducer_code(ckpt: Checkpointer, check, case) -> str:
    """Python code that re-runs one check on one case (conformance.fixtures: the name an installed harness
    has too; a checkout's top-level conformance/fixtures/ is not installed)."""
    call = f"reproduce({ckpt.impl.module.__name__!r}, {ckpt.variant!r}, {check.__name__!r}, {case!r})"
    return f"from conformance.fixtures.strategies import *; from conformance.suite.test_properties import reproduce; {call}"


def check_with_reproducer(ckpt: Checkpointer, check, case) -> None:
    """Print (on failure only) a one-line reproducer, and count the kinds of examples for statistics."""
    code = reproducer_code(ckpt, check, case)
    shell_safe = not any(c in code for c in '"$`\\!')  # reprs quote strings with ' only, so this is the rule
    note("reproduce with: python -c " + (f'"{code}"' if shell_safe else shlex.quote(code)))
    model = case.model
    event(f"depth={model.depth}, dropout={model.dropout}")
    if isinstance(case, SequentialCase):
        event(f"segments={case.segments} of {model.n_layers()} functions")
    else:
        event(f"nesting depth={case.inputs.nesting_depth()}, keyword arguments={len(case.inputs.kwargs)}")
        event(f"dtype={case.dtype}, aliasing={case.aliasing}, structure={case.structure}, options={case.options}")
    check(ckpt, case)


# -------------------------------------------------------------------------------------------- tests

def every_structure(test):
    """An explicit example per output structure, whatever the profile's examples draw (few of them, at 20
    derandomized ones, reach a plain list or dict output)."""
    for structure in reversed(STRUCTURES):
        test = example(case=Case(structure=structure))(test)
    return test


@pytest.mark.clause("api.forward-value")
@given(case=strategies.cases(structures=strategies.any_structures, argument_kinds=True, output_kinds=True))  # both variants return any structure
@every_structure
def test_forward_value_equals_the_functions(ckpt, case):
    check_with_reproducer(ckpt, check_forward_value, case)


@pytest.mark.clause("api.same-gradients")
@given(case=strategies.cases(argument_kinds=True, output_kinds=True))
def test_gradients_equal_the_uncheckpointed_run(ckpt, case):
    check_with_reproducer(ckpt, check_gradients, case)


@pytest.mark.clause("rng.same-gradients")
@given(case=strategies.cases(dropout=strategies.dropouts))
def test_dropout_gradients_equal_the_uncheckpointed_run(ckpt, case):
    check_with_reproducer(ckpt, check_gradients, case)


@pytest.mark.clause("rng.same-forward")
@given(case=strategies.cases(dropout=strategies.dropouts))
def test_dropout_forward_value_equals_the_uncheckpointed_run(ckpt, case):
    check_with_reproducer(ckpt, check_forward_value, case)


@pytest.mark.clause("rng.draws-between-passes")
@given(case=strategies.cases(dropout=strategies.dropouts, draws_between=st.integers(1, 3)))
def test_draws_between_passes_do_not_change_gradients(ckpt, case):
    check_with_reproducer(ckpt, check_gradients, case)


@pytest.mark.clause("rng.stream-restored")
@given(case=strategies.cases(dropout=strategies.dropouts, draws_between=st.integers(0, 3)))
def test_rng_stream_after_backward_is_the_uncheckpointed_runs(ckpt, case):
    check_with_reproducer(ckpt, check_rng_stream, case)


@pytest.mark.clause("nontensor.arguments-pass-through")
@given(case=strategies.cases(strategies.top_level_inputs(min_literals=1), argument_kinds=True))
def test_non_tensor_arguments_reach_the_forward_and_the_recompute(ckpt, case):
    check_with_reproducer(ckpt, check_forward_value_and_gradients, case)


@pytest.mark.clause("reqgrad.non-reentrant-gradients")
@given(case=strategies.cases(strategies.inputs_without_grad(), dropout=strategies.no_or_some_dropout,
                             structures=strategies.any_structures))
def test_non_reentrant_parameters_get_gradients_when_no_input_requires_grad(ckpt, case):
    check_with_reproducer(ckpt, check_gradients, case)  # no input requires grad: only parameters have gradients


@pytest.mark.clause("nested.non-reentrant-participates")
@given(case=strategies.cases(strategies.nested_inputs(), structures=strategies.any_structures))
def test_nested_tensors_get_the_uncheckpointed_gradients(ckpt, case):
    check_with_reproducer(ckpt, check_nested_gradients, case)


@pytest.mark.clause("nested.reentrant-not-considered")
@given(case=strategies.cases(strategies.nested_inputs(top_level_grad=st.just(False))))
def test_reentrant_output_ignores_nested_tensors(ckpt, case):
    check_with_reproducer(ckpt, check_nested_not_considered, case)


@pytest.mark.clause("sequential.same-results")
@given(case=strategies.sequential_cases(input_grad=st.just(True)))
def test_sequential_equals_running_the_functions_in_order(ckpt, case):
    check_with_reproducer(ckpt, check_sequential, case)


@pytest.mark.clause("rng.same-gradients")
@given(case=strategies.sequential_cases(dropout=strategies.dropouts, input_grad=st.just(True)))
def test_sequential_dropout_gradients_equal_the_uncheckpointed_run(ckpt, case):
    check_with_reproducer(ckpt, check_sequential_gradients, case)


@pytest.mark.clause("kwargs.non-reentrant-forwarded")
@given(case=strategies.cases(strategies.keyword_inputs(), structures=strategies.any_structures))
def test_keyword_arguments_reach_the_function_and_get_gradients(ckpt, case):
    check_with_reproducer(ckpt, check_keyword_gradients, case)


@pytest.mark.clause("kwargs.reentrant-rejected")
@given(case=strategies.cases(strategies.keyword_inputs()))
def test_reentrant_rejects_any_keyword_arguments(ckpt, case):
    check_with_reproducer(ckpt, check_keywords_rejected, case)
