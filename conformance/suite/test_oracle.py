"""The oracle: a generated program run through checkpoint behaves as the same program run without it.

"checkpoint(function, *args) returns the output of running function on *args", with the same gradients:
hypothesis builds programs (conformance/oracle/strategies.py: a region from a vocabulary of ops, random
ones of every kind, modules, in-place ops, nested checkpoints of both variants, several output
structures, non-tensor and nested and keyword arguments; the options; contexts around the forward and
the backward; the caller's steps in between and the way it differentiates), runs each twice, plainly and
checkpointed, and compares every observable at every step (conformance/oracle/observe.py). Only the
differences a clause declares (``relaxes`` in clauses.toml) are allowed; any other is charged to the
clause of the observable that differs (conformance/oracle/allowances.py), so its level decides.

A failure shrinks to a minimal program, which the message shows, and comes with a standalone script (torch
and the implementation only) that shows the difference: a file beside the results (conformance/plugin/reproducers.py;
``reports/reproducers/`` without ``--results``) that the message names and the test's record carries (its
``reproducer``, which the report links).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import event, given, note, settings
from hypothesis import strategies as st

from conformance.data import facts
from conformance import oracle
from conformance.data.causes import DifferenceFound
from conformance.data.vocabulary import FEATURES
from conformance.oracle import compare, covering
from conformance.oracle.script import reproducer as reproducer_script
from conformance.oracle.program import FAULTS, INNER_AUTOGRAD_OPS
from conformance.oracle.strategies import held_switches, inputs, ops, options, programs, sequential_programs

pytestmark = pytest.mark.charges_its_draws  # violations() re-runs each program without its random ops itself

SHARED = ("api.forward-value", "api.same-gradients")  # both variants; a failure is recharged to its own clause


def check(ckpt, program, request, write_reproducer):
    note(f"program source:\n{program.source()}")
    event(f"backward={program.backward}")
    found = oracle.violations(program, ckpt.impl.module)
    if not found:
        return
    clauses = list(dict.fromkeys(v.clause for v in found))
    facts.charge(request.node, clauses, found[0].variant or ckpt.variant)  # each example charges afresh
    script = reproducer_script(program, ckpt.impl.module.__name__, [v.observed for v in found])
    where = _shown(write_reproducer(script))
    telling = compare.most_telling_first(v.observed for v in found)
    lines = [f"{v.clause}: {v.difference}" for v in sorted(found, key=lambda v: telling.index(v.observed))[:8]]
    # The program's source is the note above (hypothesis prints it with the message, the shrunk one), the
    # script (observer and all: ~560 lines) only named.
    raise DifferenceFound.of(
        f"the checkpointed program differs from the plain one ({len(found)} difference(s)):\n  " + "\n  ".join(lines)
        + f"\n\nreproducer (a standalone script, torch and the implementation only): python {where}",
        [v.cause for v in found])


def _shown(path: Path) -> str:
    """The script's path as a user types it: relative to the working directory where it is below it."""
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


# The kinds of program the tests draw, for a variant and what the implementation claims (its Capabilities;
# benchmarks/oracle_mutants.py draws the same ones).
PROGRAMS = {
    "any": lambda variant, claims: programs(variant, claims, regions=st.sampled_from((1, 1, 1, 2))),
    "random": lambda variant, claims: programs(
        variant, claims, random=st.just(True), raises=st.just(""),
        steps=st.lists(st.sampled_from(("draw", "reseed", "read")), max_size=2).map(tuple)),
    "caller-context": lambda variant, claims: programs(variant, claims, forward_contexts=st.lists(
        st.sampled_from(("no_grad", "autocast", "autocast_float16", "default_device", "default_device_meta",
                         "global_default_device_meta", "saved_tensors_hooks", "enable_grad")), min_size=1, max_size=2, unique=True).map(tuple),
        raises=st.just(""), steps=st.just(()),
        dtypes=st.sampled_from(("float32", "float32", "bfloat16", "float64"))),  # CPU autocast casts float32
    "arguments": lambda variant, claims: programs(
        variant, claims, arguments=inputs(variant, claims.features, first_grad=st.just(True), min_extra=1, max_extra=3),
        raises=st.just(""), forward_contexts=st.just(()), steps=st.just(()),
        dtypes=st.sampled_from(("float64", "float32", "bfloat16", "complex128")),
        backward=st.sampled_from(("backward", "autograd_grad", "backward_twice", "backward_one_output"))),
    "options": lambda variant, claims: programs(
        variant, claims, random=st.just(True), raises=st.sampled_from(("", "forward")), forward_contexts=st.just(()),
        checkpoint_options=options(variant, claims.features, min_size=1, debug=True)),
    # a gradient taken, or a backward run, inside the region (after a Linear, so that h requires grad)
    "autograd-inside": lambda variant, claims: programs(
        variant, claims, raises=st.just(""), forward_contexts=st.just(()),
        inside=st.tuples(ops(("linear",)), st.sampled_from(INNER_AUTOGRAD_OPS)),
        checkpoint_options=options(variant, claims.features, min_size=1)),
    "sequential": lambda variant, claims: sequential_programs(variant, claims),
    # the caller's program around the region (issue 35): a fault, then a second, healthy call
    "faults": lambda variant, claims: programs(
        variant, claims, random=st.sampled_from((True, True, False)), raises=st.sampled_from(FAULTS),
        again=st.sampled_from((True, True, True, False)), forward_contexts=st.just(()), steps=st.just(()),
        backward=st.sampled_from(("backward", "backward_twice", "backward_subsets", "autograd_grad"))),
    # the same callable checkpointed several times before one backward (shared layers, siamese towers)
    "regions": lambda variant, claims: programs(
        variant, claims, regions=st.integers(2, 3), raises=st.just(""), forward_contexts=st.just(()),
        steps=st.lists(st.sampled_from(("read", "draw", "change_input")), max_size=1).map(tuple),
        backward=st.sampled_from(("backward", "backward_subsets", "backward_one_output", "backward_twice", "autograd_grad"))),
    # the API's own switches held around the forward, nested, left in any order the API allows, a region at
    # each level (set_checkpoint_debug_enabled(True) aside: only the options test draws debug=True)
    "switches": lambda variant, claims: programs(
        variant, claims, switches=held_switches(claims.features), raises=st.just(""), forward_contexts=st.just(()),
        steps=st.just(())),
    # two threads running the region's forward and backward at once (no random ops: their draws would
    # interleave in an order no run can repeat; no hooks: theirs would fire in such an order too; float32 and
    # float64: a shared parameter's gradient sums the threads' parts in either order, which bfloat16 rounds apart)
    "threads": lambda variant, claims: programs(
        variant, claims, threads=st.just(True), random=st.just(False), raises=st.just(""), forward_contexts=st.just(()),
        steps=st.just(()), backward=st.just("backward"), hooks=st.just(False), follow_intermediates=st.just(False),
        dtypes=st.sampled_from(("float64", "float32"))),
    # modules in eval mode while grad is on (issue 44): a frozen backbone under adapters; in every form, so that a
    # module (or its bound forward) is what checkpoint gets
    "eval-mode": lambda variant, claims: programs(
        variant, claims, eval_mode=st.just(True), raises=st.just(""), forward_contexts=st.just(()), steps=st.just(())),
    # the program's hooks (module, tensor, saved-tensor) and the lifetimes of its named intermediates (issue 35)
    "hooks-and-lifetimes": lambda variant, claims: programs(
        variant, claims, raises=st.just(""), hooks=st.just(True), follow_intermediates=st.just(True)),
}


def _draw(ckpt, data, kind):
    return data.draw(PROGRAMS[kind](ckpt.variant, ckpt.impl.capabilities), label="program")


@pytest.mark.clause(*SHARED)
@given(data=st.data())
def test_program_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    check(ckpt, _draw(ckpt, data, "any"), request, reproducer)


@pytest.mark.clause(*SHARED)
@given(data=st.data())
def test_random_program_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    """Programs that draw random numbers, with draws between the passes and every backward."""
    check(ckpt, _draw(ckpt, data, "random"), request, reproducer)


@pytest.mark.clause(*SHARED)
@given(data=st.data())
def test_program_in_a_caller_context_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    """The caller's grad mode, autocast, default device and saved-tensor hooks around the forward."""
    check(ckpt, _draw(ckpt, data, "caller-context"), request, reproducer)


@pytest.mark.clause(*SHARED)
@given(data=st.data())
def test_program_over_every_kind_of_argument_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    """Several arguments: the same tensor twice, views of one, non-leaves, non-contiguous and integral
    tensors, in nested containers and keywords (non-reentrant), a non-tensor first or last."""
    check(ckpt, _draw(ckpt, data, "arguments"), request, reproducer)


@pytest.mark.clause(*SHARED)
@given(data=st.data())
def test_program_with_each_option_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    """checkpoint's own options set explicitly (each value, the defaults included), over random programs and
    regions that raise."""
    check(ckpt, _draw(ckpt, data, "options"), request, reproducer)


@pytest.mark.clause(*SHARED, "gradmode.non-reentrant-records-graph")
@given(data=st.data())
def test_program_with_autograd_inside_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    """torch.autograd.grad (create_graph=True) and Tensor.backward called inside the region."""
    if ckpt.variant == "reentrant":
        pytest.skip("the reentrant forward records no graph (documented): autograd inside the region is the "
                    "non-reentrant variant's")
    check(ckpt, _draw(ckpt, data, "autograd-inside"), request, reproducer)


@pytest.mark.clause("sequential.same-results", "sequential.tuple-passed-whole")
@given(data=st.data())
def test_sequential_program_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    if "checkpoint_sequential" not in ckpt.impl.capabilities.features:
        pytest.skip("the implementation does not claim checkpoint_sequential")
    check(ckpt, _draw(ckpt, data, "sequential"), request, reproducer)


# ------------------------------------------------------------------- the caller's program around the region

@pytest.mark.clause(*SHARED, "exceptions.forward-propagates", "exceptions.recompute-propagates",
                    "exceptions.backward-hook-propagates", "exceptions.no-leftover-state")
@given(data=st.data())
def test_program_after_a_fault_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    """The region raises at its first call, only in the recompute, or a hook it registers raises during the
    backward; the exception, the RNG stream and the process state after it, then a second, healthy call."""
    check(ckpt, _draw(ckpt, data, "faults"), request, reproducer)


@pytest.mark.clause(*SHARED)
@given(data=st.data())
def test_program_checkpointing_one_callable_in_several_regions_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    """The same function, module, bound method or partial checkpointed two or three times before one backward,
    each on its own input; backward through different subsets of the outputs, the graph retained."""
    check(ckpt, _draw(ckpt, data, "regions"), request, reproducer)


@pytest.mark.clause(*SHARED)
@given(data=st.data())
def test_program_under_the_apis_switches_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    """set_checkpoint_early_stop and set_checkpoint_debug_enabled held around the forward, nested and left in
    every order the API allows, a region run at each level."""
    if not {"early_stop", "debug"} & ckpt.impl.capabilities.features:
        pytest.skip("the implementation claims neither set_checkpoint_early_stop nor set_checkpoint_debug_enabled")
    check(ckpt, _draw(ckpt, data, "switches"), request, reproducer)


@pytest.mark.clause(*SHARED)
@given(data=st.data())
def test_program_run_in_two_threads_at_once_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    """After the program's own backward, two threads each checkpoint the region on an input of their own and
    run its backward, at once."""
    check(ckpt, _draw(ckpt, data, "threads"), request, reproducer)


@pytest.mark.clause(*SHARED)
@given(data=st.data())
def test_program_with_modules_in_eval_mode_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    """The caller's modules and the region's own module in eval mode, grad on: the mode is the module's (dropout
    off, running statistics used), not a grad mode, so the output and the gradients are the plain run's."""
    check(ckpt, _draw(ckpt, data, "eval-mode"), request, reproducer)


# ------------------------------------------------------------ the program's hooks and its tensors' lifetimes

@pytest.mark.clause(*SHARED, "recompute.hooks-as-without-checkpoint", "memory.only-inputs-saved",
                    "memory.intermediates-freed", "memory.freed-without-collector")
@given(data=st.data())
def test_program_with_hooks_and_followed_tensors_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    """The program hooks its modules (forward pre-, forward, full backward), its first input and its output,
    and logs the forward's saved tensors through saved_tensors_hooks; which fire, how often and in what order
    (but for the recompute's forward hooks), and which of its tensors' memory is alive after each step and
    once it has returned, before and after a garbage collection."""
    check(ckpt, _draw(ckpt, data, "hooks-and-lifetimes"), request, reproducer)


# Every pair of program features within the default budget (conformance/oracle/covering.py): a row of the
# covering array per test, its other features drawn around it. The rows of the fullest feature set number the
# tests; an implementation claiming less (or the reentrant variant) has fewer rows, taken again with the next op of
# each kind.
PAIRS = len(covering.rows("non_reentrant", frozenset(FEATURES)))


@pytest.mark.clause(*SHARED)
@pytest.mark.parametrize("pair", range(PAIRS))
@settings(max_examples=1)
@given(data=st.data())
def test_every_pair_of_program_features_behaves_as_without_checkpoint(ckpt, pair, data, request, reproducer):
    features = frozenset(ckpt.impl.capabilities.features)
    table = covering.rows(ckpt.variant, features)
    fixed = covering.overrides(table[pair % len(table)], pair // len(table) + pair, ckpt.variant, features)
    check(ckpt, data.draw(programs(ckpt.variant, ckpt.impl.capabilities, **fixed), label="program"), request, reproducer)
