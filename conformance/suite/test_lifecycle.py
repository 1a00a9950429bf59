"""The caller's lifecycle: any sequence of a caller's actions around checkpoint behaves as without checkpoint.

A hypothesis state machine (conformance/oracle/lifecycle.py) takes the actions a caller takes, in any order:
regions forwarded (as a function, a module, its bound forward or through checkpoint_sequential; on a leaf, a leaf
without grad, tensor subclasses; under autocast, anomaly detection, no_grad, inference_mode, the caller's
saved-tensor hooks; with context_fn's managers or selective checkpointing) and kept for later; backwards of all,
the oldest or the newest of them, retained, through torch.autograd.grad, second order, under a GraphExecGroup made
for them, under autocast or no_grad; a forward alone in another thread, its backward in this one; forwards in two
threads that meet midway; the module's mode, freezing and a
forward pre-hook changed, its parameters stepped in place, a ContextVar the function reads set, a parameter's
gradient hook registered and removed, torch's, the caller's own, Python's and NumPy's generators drawn from, the
garbage collector run, the API's switches held, left, and left by an exception; regions that raise. Its
invariant: every observable at every step (observe.py: values,
gradients, the caller's objects, BatchNorm's updates in the forward, the RNG streams and the process state) equals
the un-checkpointed twin's. A failing sequence shrinks to the fewest actions, written out as a standalone script.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import note, settings
from hypothesis.stateful import run_state_machine_as_test

from conformance.data import facts
from conformance.data.causes import Cause, DifferenceFound
from conformance.oracle import compare, lifecycle
from conformance.oracle.script import reproducer as reproducer_script

# A sequence of at most this many actions: enough for two regions waiting together, a change between them, and
# their backwards; shrinking finds the fewest.
ACTIONS = 10
# Sequences per example of the run's hypothesis profile: a sequence is cheap (tens of milliseconds), and a bug
# shows only in the right few of many actions.
SEQUENCES = 12

# What it checks in both variants (a difference is charged to the clause of what differed, non-reentrant ones
# included: context_fn's managers, selective checkpointing, a frozen block's inputs without grad).
CLAUSES = ("api.forward-value", "api.same-gradients", "autocast.recompute-under-forward-state",
           "memory.only-inputs-saved", "modulestate.buffers-match", "exceptions.no-leftover-state",
           "rng.stream-restored")


@pytest.mark.slow  # property-based through run_state_machine_as_test, which the runner's plan cannot tell: seconds
@pytest.mark.clause(*CLAUSES)
def test_any_sequence_of_a_callers_actions_behaves_as_without_checkpoint(ckpt, request, reproducer):
    scripts = {}  # a failure's message -> its reproducer script: written once hypothesis has said which it reports

    def check(program):
        note(f"program source:\n{program.source()}")
        found = lifecycle.differences(program, ckpt.impl.module)
        if not found:
            return
        facts.charge(request.node, list(dict.fromkeys(clause for _, clause in found)))
        observed = [d for d, _ in found]
        telling = compare.most_telling_first(observed)
        lines = [f"{clause}: {d}" for d, clause in sorted(found, key=lambda f: telling.index(f[0]))[:8]]
        message = (f"the checkpointed lifecycle differs from the plain one ({len(found)} difference(s)):\n  "
                   + "\n  ".join(lines))
        scripts[message] = reproducer_script(program.source(), ckpt.impl.module.__name__, observed, lifecycle=True)
        raise DifferenceFound.of(message, [Cause("difference", d.observable, d.detail, step=d.step) for d in observed])

    machine = lifecycle.lifecycle_machine(ckpt.variant, ckpt.impl.capabilities, check)
    budget = settings(settings(), stateful_step_count=ACTIONS, max_examples=settings().max_examples * SEQUENCES)
    try:
        run_state_machine_as_test(machine, settings=budget)
    except DifferenceFound as failure:  # the sequence hypothesis reports (the shrunk one), not the last one it ran
        where = reproducer(scripts[str(failure)])
        where = where.relative_to(Path.cwd()) if where.is_relative_to(Path.cwd()) else where  # as a user types it
        raise DifferenceFound.of(f"{failure}\n\nreproducer (a standalone script, torch and the implementation only): "
                         f"python {where}", failure.causes) from None
