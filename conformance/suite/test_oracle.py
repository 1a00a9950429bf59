"""The oracle: a generated program run through checkpoint behaves as the same program run without it.

"checkpoint(function, *args) returns the output of running function on *args", with the same gradients:
hypothesis builds programs (conformance/oracle/strategies.py: a region from a vocabulary of ops, random
ones of every kind, modules, in-place ops, nested checkpoints of both variants, several output
structures, non-tensor and nested and keyword arguments; the options; contexts around the forward and
the backward; the caller's steps in between and the way it differentiates), runs each twice, plainly and
checkpointed, and compares every observable at every step (conformance/oracle/observe.py). Only the
differences a clause declares (``relaxes`` in clauses.toml) are allowed; any other is charged to the
clause of the observable that differs (conformance/oracle/allowances.py), so its level decides.

A failure shrinks to a minimal program and comes with a standalone script (torch and the implementation
only) that shows the difference: in the message, and in a file beside the results (``--results``),
whose path the test's record carries (its ``reproducer``, which the report links).
"""

from __future__ import annotations

import pytest
from hypothesis import event, given, note
from hypothesis import strategies as st

from conformance import facts, oracle
from conformance.oracle.script import reproducer as reproducer_script
from conformance.oracle.program import INNER_AUTOGRAD_OPS
from conformance.oracle.strategies import inputs, ops, options, programs, sequential_programs

SHARED = ("api.forward-value", "api.same-gradients")  # both variants; a failure is recharged to its own clause


def check(ckpt, program, request, write_reproducer):
    note(f"program source:\n{program.source()}")
    event(f"backward={program.backward}")
    found = oracle.violations(program, ckpt.impl.module)
    if not found:
        return
    clauses = list(dict.fromkeys(v.clause for v in found))
    facts.charge(request.node, clauses)
    script = reproducer_script(program, ckpt.impl.module.__name__, [v.difference for v in found])
    where = write_reproducer(script) if request.config.getoption("results") else None
    lines = [f"{v.clause}: {v.difference}" for v in found[:8]]
    shown = f"reproducer (a standalone script): {where}\n\n{program.source()}" if where else script
    raise AssertionError(
        f"the checkpointed program differs from the plain one ({len(found)} difference(s)):\n  " + "\n  ".join(lines)
        + f"\n\n{shown}")


# The kinds of program the tests draw, for a variant and what the implementation claims (its Capabilities;
# benchmarks/oracle_mutants.py draws the same ones).
PROGRAMS = {
    "any": lambda variant, claims: programs(variant, claims),
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


@pytest.mark.clause("sequential.same-results")
@given(data=st.data())
def test_sequential_program_behaves_as_without_checkpoint(ckpt, data, request, reproducer):
    if "checkpoint_sequential" not in ckpt.impl.capabilities.features:
        pytest.skip("the implementation does not claim checkpoint_sequential")
    check(ckpt, _draw(ckpt, data, "sequential"), request, reproducer)
