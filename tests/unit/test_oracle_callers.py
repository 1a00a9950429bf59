"""The oracle's program around the region (issue 35, items 4 and 5): a fault and the second, healthy call
after it, several regions of one callable, the API's switches held and left in any order it allows, two
threads, checkpoint_sequential handing tuples on."""

import pytest
import torch
import torch.utils.checkpoint as torch_checkpoint

from conformance import oracle
from conformance.oracle import compare, observe, prelude
from conformance.oracle.program import runnable
from conformance.oracle.allowances import relaxing_clauses
from conformance.oracle.program import HEALTHY_STEPS, Nested, Program, allowed_exit_orders


def _steps(program, api=prelude.PLAIN):
    """The program's steps (the record's own closing step, if it writes one, left out)."""
    return [s for s in observe.observe(runnable(program.source()), api) if s.name in program.source()]


def _step(steps, name):
    return next(s for s in steps if s.name.startswith(name))


def test_switches_of_one_name_are_left_inner_first_and_others_in_any_order():
    held = (("early_stop", False), ("debug", None), ("early_stop", True))
    orders = allowed_exit_orders(held)
    assert (2, 1, 0) in orders and (1, 2, 0) in orders and (2, 0, 1) in orders
    assert all(order.index(2) < order.index(0) for order in orders), "the outer early_stop switch left first"
    with pytest.raises(ValueError, match="cannot be left"):
        Program("non_reentrant", switches=held, switch_exits=(0, 1, 2)).source()


def test_a_program_that_stops_while_holding_switches_gives_them_back():
    """The region raises under the switches: the record leaves them, so the next program starts as this one did."""
    found = (torch_checkpoint._enable_checkpoint_early_stop, torch_checkpoint._checkpoint_debug_enabled)
    program = Program("non_reentrant", raises="forward", switches=(("early_stop", False), ("debug", False)))
    steps = _steps(program, torch_checkpoint)
    assert [s.exception for s in steps] == [ValueError]
    assert (torch_checkpoint._enable_checkpoint_early_stop, torch_checkpoint._checkpoint_debug_enabled) == found


def test_a_region_runs_at_each_level_of_the_switches():
    held = (("early_stop", False), ("debug", None))
    names = [s.name for s in _steps(Program("non_reentrant", switches=held, switch_exits=(0, 1)))]
    assert names == ["forward", "forward under set_checkpoint_early_stop(False)",
                     "forward under set_checkpoint_early_stop(False), set_checkpoint_debug_enabled(None)",
                     "forward under set_checkpoint_debug_enabled(None)", "backward"]


def test_after_a_fault_the_caller_goes_on_to_a_second_healthy_call():
    steps = _steps(Program("non_reentrant", raises="forward", again=True))
    assert [s.name for s in steps] == ["forward", "backward", *HEALTHY_STEPS]
    assert [s.exception for s in steps[:2]] == [ValueError, RuntimeError]  # the backward of nothing fails too
    assert all(s.exception is None for s in steps[2:]) and _step(steps, HEALTHY_STEPS[2]).gradients["x0"] is not None


def test_the_faults_allowances_end_when_the_caller_turns_it_off():
    program = Program("reentrant", raises="recompute", again=True)
    at = {name: compare.Difference(1, name, "exception", "raises ValueError") for name in ("backward", HEALTHY_STEPS[2])}
    assert relaxing_clauses(at["backward"], program, []) == ["exceptions.recompute-propagates"]
    assert relaxing_clauses(at[HEALTHY_STEPS[2]], program, []) == []


def test_torch_passes_a_fault_and_the_call_after_it_in_every_variant():
    for variant in ("reentrant", "non_reentrant"):
        for raises in ("forward", "recompute", "backward-hook"):
            program = Program(variant, ops=("linear", "dropout", "tanh"), raises=raises, again=True,
                              backward="backward_twice")
            assert oracle.violations(program, torch_checkpoint) == [], (variant, raises)


def test_one_callable_in_several_regions_each_on_its_own_input():
    program = Program("non_reentrant", regions=3, form="module", backward="backward_subsets")
    source = program.source()
    assert "api.checkpoint(block, y2," in source and "out = (out0, out1, out2,)" in source
    steps = _steps(program)
    assert all(_step(steps, "backward through every output").gradients[t] is not None for t in ("x0", "y1", "y2"))


def test_two_threads_each_get_their_own_gradients():
    threads = _step(_steps(Program("reentrant", ops=("linear", "tanh"), threads=True)), "two threads")
    assert threads.exception is None and not torch.equal(threads.gradients["t0"], threads.gradients["t1"])


def test_in_threads_raises_what_a_thread_raised():
    def work(i):
        if i == 1:
            raise KeyError("thread 1")
        return i

    assert prelude.in_threads(lambda i: i * 2) == (0, 2)
    with pytest.raises(KeyError, match="thread 1"):
        prelude.in_threads(work)


@pytest.mark.parametrize(("functions", "given", "segments", "enters"), [
    (("linear", "split", "pair", "merge", "linear"), "tensor", 4, True),  # segment [2] gets split's pair
    (("linear", "split", "pair", "merge", "linear"), "tensor", 3, False),  # the tuples stay in the last segment
    (("pair", "merge"), "tuple", 2, True),  # the input itself
])
def test_a_tuple_entering_a_checkpointed_segment(functions, given, segments, enters):
    program = Program("reentrant", sequential=functions, sequential_input=given, segments=segments)
    assert program.hands_on_tuples and program.tuple_enters_a_segment is enters


# ---------------------------------------------------------------- a failure charged to the variant that failed

@pytest.mark.parametrize("outer", ["reentrant", "non_reentrant"])
def test_a_difference_of_a_nested_region_is_charged_to_the_nested_regions_variant(outer):
    """A bug of one variant shows in a program of the other that nests a region of it (issue 45): the failure is
    charged to the nested region's variant, so the outer variant's column stays green; a difference the outer region
    makes itself stays the outer variant's."""
    from tests.mutants.rng import non_reentrant_forces_no_preserve as non_reentrant_bug  # non_reentrant only

    inner = outer != "reentrant"  # the nested region's use_reentrant
    nested = Program(outer, ops=("linear", Nested(inner, ("dropout",)), "tanh"))
    found = oracle.violations(nested, non_reentrant_bug)
    if outer == "reentrant":
        assert found and {v.variant for v in found} == {"non_reentrant"}, found
    else:  # the nested region is reentrant, which the mutant does not touch: the outer non_reentrant region's bug
        assert found and {v.variant for v in found} == {None}, found
