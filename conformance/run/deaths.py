"""How the runner writes up an attempt that ended inside a test: a CRASH or a TIMEOUT record, saying why
(which limit applied, who ended the process, its exit status) with the tail of its output.

A TIMEOUT when the runner killed the attempt (the test outran its limit and grace, or the whole-run bound
expired), or when pytest-timeout ended it (its banner in the output, or the test ran its whole limit);
a CRASH otherwise. The tail leaves out pytest's and pluggy's own frames, so that the test's frames end it.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.data.results import Record
from conformance.run.ledger import Ledger
from conformance.run.policy import Limits

TAIL_LINES = 30  # of a dead attempt's output, kept in the CRASH / TIMEOUT message
TIMEOUT_BANNER = re.compile(r"^\+{3,} Timeout \+{3,}$", re.M)  # what pytest-timeout prints before exiting
RUNNER_FRAME = re.compile(r'^  File ".*[/\\](_pytest|pluggy)[/\\]')  # a frame of the test runner, not the test


@dataclass
class Attempt:
    """What one attempt (a pytest process over the tests left) ended as."""

    number: int
    limit: float  # the per-test limit it ran under (slow tests: Limits.slow_timeout)
    lane: int = 1
    rc: int | None = None
    running: str | None = None  # the test the attempt was in when it ended
    running_for: float = 0.0
    running_limit: float = 0.0  # the limit of that test
    killed: str | None = None  # "run": the whole-run bound expired; "test": a test outran its timeout; "given
    # up": another lane gave up on the test it ran (its NOT-RUN record stands: a test's first record does);
    # "stopped": the run was stopped (a signal to the runner), and the test gets no record
    new_records: int = 0
    output: str = ""
    clean: bool = False  # pytest finished its session and wrote its results file


def record_death(ledger: Ledger, attempt: Attempt, limits: Limits, log: Path) -> Record | None:
    """The CRASH or TIMEOUT record of the test the attempt's process ended in (None if it has one already)."""
    seconds = attempt.running_for
    if attempt.killed == "run":
        outcome, why = "timeout", f"the whole-run bound of {limits.run_timeout:g} s expired while this test ran"
    elif attempt.killed == "test":
        outcome, why = "timeout", (f"still running {seconds:.0f} s after it started (limit {_limit(attempt, limits)}); "
                                   "pytest-timeout could not stop it, so the supervisor killed the process")
    elif TIMEOUT_BANNER.search(attempt.output) or seconds >= attempt.running_limit:
        outcome, why = "timeout", f"did not finish within {_limit(attempt, limits)} (pytest-timeout ended the process)"
    else:
        outcome, why = "crash", f"the test process ended during this test ({_exit_status(attempt.rc)})"
    last = tail(_without_runner_frames(attempt.output), TAIL_LINES)
    message = f"{why}; last output (all of it in {log.name}):\n{last}" if last else f"{why} (output in {log.name})"
    return ledger.died(attempt.running, outcome, message, seconds)


def _limit(attempt: Attempt, limits: Limits) -> str:
    cut = limits.for_run(limits.cut_after)
    for was, now in ((limits.test_timeout, cut), (limits.slow_limit, limits.slow_limit_under(cut))):
        if attempt.running_limit == now < was:
            return f"{now:g} s, cut from {was:g} s after {limits.cut_after} timeouts in this run"
    return f"{attempt.running_limit:g} s"


def _exit_status(rc: int | None) -> str:
    if rc is not None and rc < 0:
        try:
            return f"killed by signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    if rc == pytest.ExitCode.INTERNAL_ERROR:
        return f"exit code {rc}: pytest stopped on an INTERNALERROR"
    if rc == pytest.ExitCode.INTERRUPTED:
        return f"exit code {rc}: pytest was interrupted"
    return f"exit code {rc}"


def _without_runner_frames(text: str) -> str:
    """A stack dump without pytest's and pluggy's own frames, so that the test's frames are the tail."""
    kept, skipping = [], False
    for line in text.splitlines():
        if RUNNER_FRAME.match(line):
            skipping = True
        elif skipping and line.startswith("    "):  # the source line of a skipped frame
            continue
        else:
            skipping = False
            kept.append(line)
    return "\n".join(kept)


def tail(text: str, lines: int) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])
