"""The oracle's hooks and lifetimes observables (conformance/oracle/observe.py) tell a recompute's rerun of the
forward hooks, which a clause allows, from every other change in which hooks fire, how often and in what
order; and a tensor kept alive, or held by a reference cycle, from one freed as in the plain run."""

import gc

import pytest

from conformance.oracle.prelude import PLAIN
from conformance.oracle.observe import Step, observe
from conformance.oracle.compare import compare
from conformance.oracle.program import Program, runnable

FORWARD = ("pre:block", "pre:m0", "fwd:m0", "pre:m1", "fwd:m1", "fwd:block")
BACKWARD = ("grad:out", "bwd:m1", "bwd:m0", "bwd:block", "grad:x0")


def _observables(forward, backward, plain_forward=FORWARD, plain_backward=BACKWARD) -> list[str]:
    plain = [Step("forward", hooks=plain_forward), Step("backward", backward=True, hooks=plain_backward)]
    checkpointed = [Step("forward", hooks=forward), Step("backward", backward=True, hooks=backward)]
    return [d.observable for d in compare(checkpointed, plain)]


@pytest.mark.parametrize("backward", [
    ("grad:out", *FORWARD, "bwd:m1", "bwd:m0", "bwd:block", "grad:x0"),  # reentrant: the whole forward again
    ("grad:out", "pre:block", "pre:m0", "fwd:m0", "pre:m1", "bwd:m1", "bwd:m0", "bwd:block", "grad:x0"),  # early stop
    ("grad:out", "pre:m1", "fwd:m1", "bwd:m1", "pre:m0", "fwd:m0", "bwd:m0", "bwd:block", "grad:x0"),  # two regions
], ids=["whole-rerun", "early-stop", "stretches-from-module-entries"])
def test_a_rerun_of_the_forwards_hooks_in_backward_is_told_apart(backward):
    assert _observables(FORWARD, backward) == ["hooks-rerun"]


@pytest.mark.parametrize("forward, backward", [
    (FORWARD, ("grad:out", "bwd:m1", "bwd:block", "grad:x0")),  # a backward hook dropped
    (FORWARD, ("grad:out", "bwd:m1", "bwd:m1", "bwd:m0", "bwd:block", "grad:x0")),  # one fired twice
    (FORWARD, ("grad:out", "bwd:m0", "bwd:m1", "bwd:block", "grad:x0")),  # two out of order
    (FORWARD, ("grad:out", "bwd:m1", "bwd:m0", "bwd:block", "grad:x0", "grad:x0")),  # a tensor hook twice
    (FORWARD, ("grad:out", "fwd:m1", "pre:m1", "bwd:m1", "bwd:m0", "bwd:block", "grad:x0")),  # a rerun out of order
    (FORWARD, ("grad:out", "fwd:m0", "bwd:m1", "bwd:m0", "bwd:block", "grad:x0")),  # a rerun from no module's entry
    (FORWARD[:2] + FORWARD[3:], BACKWARD),  # a forward hook missing from the forward
], ids=["dropped", "duplicated", "reordered", "tensor-hook-twice", "rerun-reordered", "rerun-mid-module",
        "forward-hook-missing"])
def test_any_other_change_is_a_difference_of_the_hooks(forward, backward):
    assert _observables(forward, backward) == ["hooks"]


def test_forward_hooks_fired_twice_in_the_forward_are_a_rerun_inside_the_forward():
    """What a recompute inside the forward fires (autograd inside the region), and what a dry run does: the
    clause allows it only where the region runs autograd inside itself."""
    assert _observables(FORWARD + FORWARD, BACKWARD) == ["hooks-rerun-in-forward"]


def test_hooks_are_not_compared_in_a_step_the_plain_run_fails():
    plain = [Step("forward", hooks=FORWARD), Step("backward", backward=True, hooks=(), exception=ValueError)]
    checkpointed = [Step("forward", hooks=FORWARD), Step("backward", backward=True, hooks=("grad:out",), exception=ValueError)]
    assert [d.observable for d in compare(checkpointed, plain)] == []


def test_a_graph_holding_a_packed_tensor_the_region_made_is_a_difference():
    plain = [Step("forward", hooks=("pack", "pack"), held_packs=2)]
    assert [d.observable for d in compare([Step("forward", hooks=("pack",), held_packs=0)], plain)] == []
    assert [d.observable for d in compare([Step("forward", hooks=("pack",) * 2, held_packs=2)], plain)] == [
        "saved-tensor-hooks"]


@pytest.mark.parametrize("alive, collected, expected", [
    ({"x0", "out"}, set(), []),  # as the plain run
    ({"x0"}, set(), []),  # less: what checkpointing is for
    ({"x0", "out", "h1"}, set(), ["lifetimes"]),  # a tensor the plain run freed, still alive
    ({"x0", "out", "h1"}, {"h1"}, ["reference-cycles"]),  # freed only by the collector
], ids=["same", "fewer", "kept", "cycle"])
def test_lifetimes_allow_less_and_flag_more_or_a_cycle(alive, collected, expected):
    plain = [Step("forward", alive=frozenset({"x0", "out"}))]
    checkpointed = [Step("forward", alive=frozenset(alive), collected=frozenset(collected))]
    assert [d.observable for d in compare(checkpointed, plain)] == expected


def test_observing_leaves_the_garbage_collector_as_it_found_it():
    """observe() turns the collector's own runs off and freezes what exists while the program runs: after it,
    the collector runs again by itself and nothing stays frozen."""
    steps = observe(runnable(Program("non_reentrant", hooks=True, follow_intermediates=True).source()), PLAIN)
    assert steps[-1].alive == frozenset(), "the plain program's tensors outlive it"
    assert gc.isenabled() and gc.get_freeze_count() == 0
