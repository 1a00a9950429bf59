"""checkpoint_sequential (clauses sequential.*)."""

import pytest
import torch
from torch import nn

from conformance.testing.assertions import ANY_ERROR, assert_raises, assert_same_forward, assert_same_gradients, parameter_grads
from conformance.data.dimensions import SEQUENTIAL_FUNCTIONS
from conformance.fixtures.functions import weighted_loss
from conformance.fixtures.inputs import OPTIONS, leaf, twin_leaves
from conformance.fixtures.models import NESTED_BLOCKS, counted_stack, log_calls, mlp, nested_stack, twins
from conformance.data.vocabulary import sequential_segments

# The ways to hand over the same six functions (Linear, Tanh) x 3: name -> container of a model's children.
CONTAINERS = {
    "nn.Sequential": lambda model: model,
    "list-of-modules": lambda model: list(model.children()),
    "nn.ModuleList": lambda model: nn.ModuleList(model.children()),
    "list-of-functions": lambda model: [torch.tanh if isinstance(f, nn.Tanh) else f for f in model.children()],
}


def _run_in_order(functions, x):
    for function in functions:
        x = function(x)
    return x


@pytest.mark.clause("sequential.same-results")
@pytest.mark.parametrize("segments", [2, 4], ids=["2-segments", "4-segments-uneven"])
@pytest.mark.parametrize("container", CONTAINERS)
def test_outputs_and_gradients_equal_running_the_functions_in_order(ckpt, container, segments):
    model, reference = twins(mlp(depth=3))
    x, reference_x = twin_leaves()
    actual = ckpt.sequential(CONTAINERS[container](model), segments, x)
    expected = _run_in_order(reference.children(), reference_x)
    assert_same_forward(actual, expected)
    actual.sum().backward()
    expected.sum().backward()
    assert_same_gradients([x.grad, *parameter_grads(model)], [reference_x.grad, *parameter_grads(reference)],
                          ["input"] + [n for n, _ in model.named_parameters()])


def _same_results(ckpt, segments, **kwargs):
    """checkpoint_sequential over the six functions of an MLP equals running them in order, in value and gradients."""
    model, reference = twins(mlp(depth=3))
    assert len(list(model.children())) == SEQUENTIAL_FUNCTIONS
    x, reference_x = twin_leaves()
    actual = ckpt.sequential(list(model.children()), segments, x, **kwargs)
    expected = _run_in_order(reference.children(), reference_x)
    assert_same_forward(actual, expected)
    weighted_loss(actual).backward()
    weighted_loss(expected).backward()
    assert_same_gradients([x.grad, *parameter_grads(model)], [reference_x.grad, *parameter_grads(reference)],
                          ["input"] + [n for n, _ in model.named_parameters()])


SEGMENTS = list(range(1, SEQUENTIAL_FUNCTIONS + 1))  # every count that can split the functions


@pytest.mark.clause("sequential.same-results")
@pytest.mark.parametrize("preserve_rng_state", [True, False])
@pytest.mark.parametrize("segments", SEGMENTS)
def test_every_segment_count_gives_the_results_of_running_in_order(ckpt, segments, preserve_rng_state):
    _same_results(ckpt, segments, preserve_rng_state=preserve_rng_state)


@pytest.mark.clause("sequential.same-results")
@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("segments", SEGMENTS)
def test_results_are_the_same_with_options_omitted_or_explicitly_default(ckpt, segments, options):
    _same_results(ckpt, segments, **({} if options == "omitted" else {"preserve_rng_state": True}))


def recomputed_chunks(rerun_log):
    """Split the log of functions re-run in backward into chunks: runs of consecutive indices.

    A chunk re-runs its functions in order, and chunks are re-run one at a time in backward, so a
    break in the ascending sequence is a chunk boundary.
    """
    chunks = []
    for index in rerun_log:
        if chunks and index == chunks[-1][-1] + 1:
            chunks[-1].append(index)
        else:
            chunks.append([index])
    return chunks


def _rerun_chunks(ckpt, functions, log, segments):
    """checkpoint_sequential forward and backward over functions that log their index when called: the
    chunks re-run in backward (the forward must run each function once, in order)."""
    n = len(functions)
    ckpt.sequential(functions, segments, leaf()).sum().backward()
    assert log[:n] == list(range(n)), f"the forward ran the functions as {log[:n]}, not once each in order"
    return recomputed_chunks(log[n:])


def _forward_backward(ckpt, n, segments):
    layers, log = counted_stack(n)
    return _rerun_chunks(ckpt, layers, log, segments)


@pytest.mark.clause("sequential.segments")
@pytest.mark.parametrize("n, segments", [(4, 2), (6, 3), (4, 4), (8, 2)], ids=lambda v: str(v))
def test_all_segments_but_the_last_are_rerun_once_in_backward(ckpt, n, segments):
    chunks = _forward_backward(ckpt, n, segments)
    size = n // segments
    expected = [list(range(start, start + size)) for start in range(0, n - size, size)]
    assert sorted(chunks) == expected, (
        f"{n} functions in {segments} segments: backward re-ran chunks {chunks}, expected each of {expected} "
        f"once (in any order) and never the last segment {list(range(n - size, n))}"
    )


@pytest.mark.clause("sequential.segments")
@pytest.mark.parametrize("n, segments", [(5, 2), (7, 3), (10, 3), (6, 4)], ids=lambda v: str(v))
def test_uneven_split_reruns_segments_minus_one_leading_chunks_never_the_last_function(ckpt, n, segments):
    chunks = _forward_backward(ckpt, n, segments)
    rerun = sorted(i for chunk in chunks for i in chunk)
    assert len(chunks) == segments - 1, (
        f"{n} functions in {segments} segments: backward re-ran {len(chunks)} chunks {chunks}")
    assert rerun == list(range(len(rerun))), f"re-ran {rerun}: not each of the leading functions once"
    assert n - 1 not in rerun, f"the last function (of the last segment) was re-run: {chunks}"


@pytest.mark.clause("sequential.segments")
@pytest.mark.parametrize("segments", SEGMENTS)
def test_every_segment_count_reruns_all_segments_but_the_last(ckpt, segments):
    n = SEQUENTIAL_FUNCTIONS
    chunks = _forward_backward(ckpt, n, segments)
    rerun = sorted(i for chunk in chunks for i in chunk)
    assert len(chunks) == segments - 1, f"{n} functions in {segments} segments: backward re-ran {len(chunks)} chunks {chunks}"
    assert rerun == list(range(len(rerun))), f"re-ran {rerun}: not each of the leading functions once"
    assert n - 1 not in rerun, f"the last function (of the last segment) was re-run: {chunks}"
    if n % segments == 0:
        size = n // segments
        assert sorted(chunks) == [list(range(s, s + size)) for s in range(0, n - size, size)], (
            f"{n} functions in {segments} equal segments: backward re-ran {chunks}")


# An nn.Sequential whose children are blocks with their own forward is split into its children, never
# into their leaf modules: each child is one of the functions (torch 1.0's source unpacks it with
# list(functions.children()): https://pytorch.org/docs/1.0.0/_modules/torch/utils/checkpoint.html).
NESTED_SEGMENTS = [2, 3]  # even splits of six children, so the chunks are fixed by the docs


@pytest.mark.clause("sequential.same-results")
@pytest.mark.parametrize("segments", NESTED_SEGMENTS)
@pytest.mark.parametrize("block", NESTED_BLOCKS)
def test_a_sequential_of_blocks_gives_the_results_of_the_uncheckpointed_model(ckpt, block, segments):
    model, reference = twins(nested_stack(block, SEQUENTIAL_FUNCTIONS))
    x, reference_x = twin_leaves()
    actual = ckpt.sequential(model, segments, x)
    expected = reference(reference_x)  # nn.Sequential's own forward: its children in order
    assert_same_forward(actual, expected)
    weighted_loss(actual).backward()
    weighted_loss(expected).backward()
    assert_same_gradients([x.grad, *parameter_grads(model)], [reference_x.grad, *parameter_grads(reference)],
                          ["input"] + [n for n, _ in model.named_parameters()])


@pytest.mark.clause("sequential.segments")
@pytest.mark.parametrize("segments", NESTED_SEGMENTS)
@pytest.mark.parametrize("block", NESTED_BLOCKS)
def test_a_sequential_of_blocks_is_split_into_its_children(ckpt, block, segments):
    model = nested_stack(block, SEQUENTIAL_FUNCTIONS)
    log = log_calls(model.children())
    chunks = _rerun_chunks(ckpt, model, log, segments)
    expected = [list(range(start, stop)) for start, stop in sequential_segments(SEQUENTIAL_FUNCTIONS, segments)]
    assert sorted(chunks) == expected, (
        f"an nn.Sequential of {SEQUENTIAL_FUNCTIONS} {block} blocks in {segments} segments: backward re-ran the "
        f"children {chunks}, expected each chunk of {expected} once and never the last segment")


@pytest.mark.clause("sequential.bad-segments")
@pytest.mark.parametrize("segments", [0, 7], ids=["zero", "more-than-functions"])
def test_segment_count_that_cannot_split_the_functions_is_rejected(ckpt, segments):
    functions, x = list(mlp(depth=3).children()), leaf()  # 6 functions
    # A count no split can honour is a bad value (ValueError); torch divides by it first (ZeroDivisionError).
    with assert_raises((ValueError, ZeroDivisionError), f"an error for segments={segments} with 6 functions"):
        ckpt.sequential(functions, segments, x)


@pytest.mark.clause("sequential.unknown-keywords-rejected")
@pytest.mark.parametrize("keyword", ["context_fn", "preserve_rng", "inputs"])
def test_a_keyword_checkpoint_sequential_does_not_take_is_rejected(ckpt, keyword):
    # context_fn is checkpoint's, not checkpoint_sequential's; preserve_rng a misspelling; inputs the old name.
    model, x = mlp(), leaf()
    with assert_raises(ANY_ERROR, f"an error for the keyword {keyword}=, which checkpoint_sequential does not take"):
        ckpt.checkpoint_sequential(model, 2, x, use_reentrant=ckpt.use_reentrant, **{keyword: None})


@pytest.mark.clause("sequential.single-input")
def test_extra_positional_inputs_are_rejected(ckpt):
    model, x, extra = mlp(), leaf(seed=1), leaf(seed=2)
    with assert_raises(ANY_ERROR, "an error for a second positional input"):
        ckpt.checkpoint_sequential(model, 2, x, extra, use_reentrant=ckpt.use_reentrant)


class _TakesAnything(nn.Module):
    """A stage that runs on no argument too: only checkpoint_sequential's signature can refuse a call without input."""

    def forward(self, *args):
        return torch.ones(2, requires_grad=True) if not args else args[0]


@pytest.mark.clause("sequential.single-input")
def test_a_call_without_an_input_is_rejected(ckpt):
    with assert_raises(ANY_ERROR, "an error for a call without an input"):
        ckpt.checkpoint_sequential(nn.Sequential(_TakesAnything(), _TakesAnything()), 1, use_reentrant=ckpt.use_reentrant)
