"""The oracle: a checkpointed program behaves as the un-checkpointed one (issue 24).

- program.py: the program model, written out as Python source;
- strategies.py: hypothesis strategies that build programs;
- observe.py: runs a program plainly or checkpointed and records what a user can observe, per step, and
  compares two records (torch and the standard library only: reproducer scripts embed it);
- allowances.py: the differences the registry allows (clauses' ``relaxes``) and the clause a difference
  violates;
- script.py: a falsifying program as a standalone script.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from conformance.data.causes import Cause
from conformance.oracle import compare, observe, prelude
from conformance.oracle.program import runnable
from conformance.oracle.allowances import charged_clause, relaxing_clauses
from conformance.oracle.program import HEALTHY_STEPS, RANDOM_OPS, Nested, Program


@dataclass(frozen=True)
class ChargedDifference:
    observed: compare.Difference  # as the observer found it: what a reproducer script shows
    clause: str  # the clause it is charged to
    drawn: bool = False  # it differs only while the region draws random numbers
    variant: str | None = None  # the variant of the regions whose behaviour differed (None: the outer region's)

    @property
    def difference(self) -> compare.Difference:
        """The difference as charged: the RNG's where it is the random draws' doing."""
        return _drawn(self.observed) if self.drawn else self.observed

    @property
    def cause(self) -> Cause:
        """The difference as a failure's cause (conformance/data/causes.py): what declarations match, the report groups."""
        return Cause("difference", self.difference.observable, self.difference.detail, step=self.difference.step)


def violations(program: Program, implementation) -> list[ChargedDifference]:
    """The differences between the program run through the implementation and run plainly that no clause
    allows, each charged to the clause it violates, and to the other variant where the difference is the doing of
    the checkpoints of that variant nested in the region (it vanishes with them made of the outer variant)."""
    found = _violations(program, implementation)
    other = "non_reentrant" if program.reentrant else "reentrant"
    if found and _nests(program, other) and not differences(_nested_in_its_own_variant(program), implementation):
        return [replace(v, variant=other) for v in found]
    return found


def _violations(program: Program, implementation) -> list[ChargedDifference]:
    found = differences(program, implementation)
    debug = program.option.get("debug") is True or True in program.switch_values("debug")
    if found and debug and not program.reentrant and not differences(_without_debug(program), implementation):
        # debug=True only adds information to a checkpoint's errors: what differs only with it violates that
        return [ChargedDifference(d, "debug.trace-in-errors") for d in found]
    if found and program.random and not differences(_without_random(program), implementation):
        # what differs only while the region draws random numbers is the RNG replay's, whatever else the program
        # does (autograd inside, a grad mode, a backward kind): a failure of the rng clauses, whose cause is the RNG
        # and of those, what differs only after a fault is the state the fault left behind
        left_by_the_fault = bool(program.raises) and not differences(replace(program, armed=False), implementation)
        return [ChargedDifference(d, _rng_clause(d, program, left_by_the_fault), drawn=True) for d in found]
    return [ChargedDifference(d, charged_clause(d, program)) for d in found]


def _nests(program: Program, variant: str) -> bool:
    return any(isinstance(op, Nested) and op.reentrant == (variant == "reentrant") for op in program.ops)


def _nested_in_its_own_variant(program: Program) -> Program:
    """The same program with every checkpoint nested in its region of the outer region's variant: what still differs
    is not the other variant's doing (run plainly instead, a nested region could hide what the outer one does)."""
    return replace(program, ops=tuple(Nested(program.reentrant, op.ops) if isinstance(op, Nested) else op
                                      for op in program.ops))


def _without_random(program: Program) -> Program:
    """The same program with each random op of its region (and of its nested checkpoints and sequential functions)
    replaced by a deterministic one: what still differs is not the RNG's doing."""
    def plain(ops):
        return tuple(Nested(op.reentrant, plain(op.ops)) if isinstance(op, Nested)
                     else "tanh" if op.split(":")[0] in RANDOM_OPS else op for op in ops)
    return replace(program, ops=plain(program.ops), sequential=tuple("tanh" if f == "dropout" else f for f in program.sequential))


def _drawn(d: compare.Difference) -> compare.Difference:
    """A difference the random draws make: its observable is the RNG's."""
    if d.observable == "rng":
        return d
    return replace(d, observable="rng", detail=f"{d.observable} differ(s) only while the region draws random numbers: {d.detail}")


def _rng_clause(d: compare.Difference, program: Program, left_by_the_fault: bool = False) -> str:
    """The rng clause a difference made by the random draws violates (a fault's, where it differs only with the fault)."""
    if left_by_the_fault and (d.observable == "rng" or d.name in HEALTHY_STEPS):
        return "exceptions.no-leftover-state"  # the stream a fault left behind (checkpoint's RNG stash not undone)
    if d.observable == "rng" or d.name == "draw random numbers":
        return "rng.stream-restored"
    if d.step == 0 and d.observable in ("result", "requires-grad", "exception", "exception-type"):
        return "rng.same-forward"
    if {"draw", "reseed"} & set(program.steps):
        return "rng.draws-between-passes"
    return "rng.same-gradients"


def _without_debug(program: Program) -> Program:
    """The program without debug=True: the option dropped, set_checkpoint_debug_enabled(True) held as (None)."""
    return replace(program, options=tuple(o for o in program.options if o[0] != "debug"),
                   switches=tuple((n, None if n == "debug" and v is True else v) for n, v in program.switches))


def differences(program: Program, implementation) -> list[compare.Difference]:
    """What differs between the program run through the implementation and run plainly, less what a clause allows."""
    run = runnable(program.source())
    expected = observe.observe(run, prelude.PLAIN)
    actual = observe.observe(run, implementation)
    found = compare.compare(actual, expected)
    allowed = [d for d in found if relaxing_clauses(d, program, expected)]
    rejected = {d.step for d in allowed if d.observable in ("exception", "exception-type")}
    return [d for d in found if d not in allowed and _compared(d, rejected, expected)]


def _compared(d: compare.Difference, rejected: set, expected: list[observe.Step]) -> bool:
    """Whether a difference counts, given the steps one run rejected (an allowed exception).

    A rejected step returns nothing and draws nothing there: what it would have returned, drawn or warned is
    not compared; the process state and the caller's objects still are, and after a backward the RNG stream
    too where no step was rejected before it (the plain backward runs none of the region, so draws nothing:
    a recompute that fails must leave the stream as it was). A program that goes on after a failing step
    (program.again): the steps after a rejected one, up to the fault being turned off (HEALTHY_STEPS), use
    what it did not return: only the process state and the caller's objects count there."""
    kept = ("state", "objects")
    first = min(rejected, default=None)
    if d.step in rejected:
        return d.observable in kept or (d.observable == "rng" and expected[d.step].backward and d.step == first)
    if first is not None and d.step > first and d.name not in HEALTHY_STEPS:
        return d.observable in kept
    return True
