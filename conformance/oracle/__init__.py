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

from conformance.oracle import observe
from conformance.oracle.allowances import charged_clause, relaxing_clauses
from conformance.oracle.program import Program


@dataclass(frozen=True)
class Violation:
    difference: observe.Difference
    clause: str  # the clause it is charged to


def violations(program: Program, implementation) -> list[Violation]:
    """The differences between the program run through the implementation and run plainly that no clause
    allows, each charged to the clause it violates."""
    found = differences(program, implementation)
    if found and program.option.get("debug") is True and not program.reentrant \
            and not differences(replace(program, options=tuple(o for o in program.options if o[0] != "debug")),
                                implementation):
        # debug=True only adds information to a checkpoint's errors: what differs only with it violates that
        return [Violation(d, "debug.trace-in-errors") for d in found]
    return [Violation(d, charged_clause(d, program)) for d in found]


def differences(program: Program, implementation) -> list[observe.Difference]:
    """What differs between the program run through the implementation and run plainly, less what a clause allows."""
    run = observe.program(program.source())
    expected = observe.observe(run, observe.PLAIN)
    actual = observe.observe(run, implementation)
    found = observe.compare(actual, expected)
    allowed = [d for d in found if relaxing_clauses(d, program, expected)]
    # A step that one run rejects (allowed) returns nothing and draws nothing there: what it would have
    # returned, drawn or warned is not compared; the process state and the caller's objects still are.
    rejected = {d.step for d in allowed if d.observable in ("exception", "exception-type")}
    return [d for d in found if d not in allowed and not (d.step in rejected and d.observable not in ("state", "objects"))]
