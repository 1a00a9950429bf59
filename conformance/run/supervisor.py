"""Runs the suite against one (implementation, variant, device) in pytest subprocesses, surviving
crashes and hangs.

Each attempt is a fresh ``python -m pytest`` (a fresh process is also what CUDA needs). The
attempt's JSONL stream says which test is running; when the process dies, that test gets a CRASH
record (a TIMEOUT one if pytest-timeout ended it or it ran past its limit), and a new attempt runs
the tests still left, deselecting those already done. A whole-run bound stops everything: the
running test and every test not yet run get TIMEOUT records. The merged results are written
atomically to ``<out>/<name>.json``; all attempts' output goes to ``<out>/<name>.log``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from conformance.results import Record, write_results
from conformance.run.ledger import Ledger

SUITE_DIR = Path(__file__).resolve().parents[1] / "suite"
POLL_S = 0.1
TAIL_LINES = 30  # of a dead attempt's output, kept in the CRASH / TIMEOUT message
TIMEOUT_BANNER = re.compile(r"^\+{3,} Timeout \+{3,}$", re.M)  # what pytest-timeout prints before exiting
RUNNER_FRAME = re.compile(r'^  File ".*[/\\](_pytest|pluggy)[/\\]')  # a frame of the test runner, not the test
COLLECTION_ERROR = re.compile(r"^_+ ERROR collecting (.+?) _+$", re.M)  # a test file pytest could not import



class RunError(Exception):
    """The run produced no results at all (e.g. a bad --impl): the message says why."""


@dataclass(frozen=True)
class RunSpec:
    impl: str
    variant: str  # reentrant | non_reentrant | both
    device: str  # cpu | cuda | all

    @property
    def name(self) -> str:
        return f"{self.impl}-{self.variant}-{self.device}"


@dataclass(frozen=True)
class Limits:
    test_timeout: float = 120.0  # per test, enforced by pytest-timeout (method thread) in the child
    run_timeout: float = 1800.0  # per run, across all its attempts, enforced here
    grace: float = 15.0  # how long past test_timeout a test may still run before we kill the process


@dataclass
class Attempt:
    number: int
    rc: int | None = None
    running: str | None = None  # the test the process was in when it ended
    running_for: float = 0.0
    killed: str | None = None  # "run": the whole-run bound expired; "test": a test outran its timeout
    new_records: int = 0
    output: str = ""
    clean: bool = False  # pytest finished its session and wrote its results file


@dataclass
class Outcome:
    path: Path
    log: Path
    records: list[Record]
    attempts: int
    seconds: float
    counts: dict[str, int] = field(default_factory=dict)
    collection_errors: list[str] = field(default_factory=list)  # test files pytest could not import


def supervise(spec: RunSpec, out_dir: Path, limits: Limits = Limits(), *, clauses=(), pytest_args=(),
              on_record: Callable[[Record], None] = lambda record: None) -> Outcome:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    log = out_dir / f"{spec.name}.log"
    log.write_text("")
    ledger = Ledger()
    started = time.monotonic()
    deadline = started + limits.run_timeout
    attempts: list[Attempt] = []
    with tempfile.TemporaryDirectory(prefix="conformance-run-") as work:
        while True:
            attempt = _run_attempt(spec, Path(work), len(attempts) + 1, ledger, limits, deadline,
                                   clauses, pytest_args, on_record)
            attempts.append(attempt)
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"===== attempt {attempt.number}: exit {attempt.rc} =====\n{attempt.output}\n")
            if attempt.clean:
                break
            if attempt.running:
                on_record(_record_death(ledger, attempt, limits, log))
            if attempt.killed == "run" or time.monotonic() >= deadline:
                for record in ledger.close_remaining(
                        "not_run", f"the whole-run bound of {limits.run_timeout:g} s expired before it started"):
                    on_record(record)
                break
            if not ledger.remaining():
                break
            if not attempt.running and not attempt.new_records:  # no progress: restarting would loop
                for record in ledger.close_remaining(
                        "not_run", f"pytest exited with code {attempt.rc} between tests (see {log.name})"):
                    on_record(record)
                break
    if ledger.header is None:
        raise RunError(f"{spec.name}: pytest exited with code {attempts[-1].rc} before collecting any test:\n"
                       f"{_tail(attempts[-1].output, 15)}")
    seconds = time.monotonic() - started
    results = ledger.results(
        finished=_now(), exit=attempts[-1].rc,
        supervisor={
            "attempts": len(attempts),
            "test_timeout_s": limits.test_timeout,
            "run_timeout_s": limits.run_timeout,
            "timeout_method": "thread",
            "seconds": round(seconds, 1),
            "log": log.name,
            "collection_errors": sorted({m for a in attempts for m in COLLECTION_ERROR.findall(a.output)}),
        },
    )
    path = out_dir / f"{spec.name}.json"
    write_results(path, results)
    counts: dict[str, int] = {}  # verdict -> tests
    for record in results.records:
        counts[record.verdict] = counts.get(record.verdict, 0) + 1
    return Outcome(path, log, results.records, len(attempts), seconds, counts, results.header["supervisor"]["collection_errors"])


def pytest_command(spec: RunSpec, results: Path, plan: Path, argsfile: Path, limits: Limits,
                   clauses=(), pytest_args=()) -> list[str]:
    return [
        sys.executable, "-m", "pytest", "-p", "conformance.plugin", "-p", "conformance.run.plan",
        "-p", "no:cacheprovider", "-q", "-rN", "--continue-on-collection-errors",
        f"--impl={spec.impl}", f"--variant={spec.variant}", f"--device={spec.device}",
        f"--results={results}", f"--conformance-plan={plan}",
        f"--timeout={limits.test_timeout:g}", "--timeout-method=thread",
        *[f"--clause={c}" for c in clauses], *pytest_args, f"@{argsfile}", str(SUITE_DIR),
    ]


def _run_attempt(spec, work: Path, number: int, ledger: Ledger, limits: Limits, deadline: float,
                 clauses, pytest_args, on_record) -> Attempt:
    attempt = Attempt(number)
    results, plan = work / f"attempt-{number}.json", work / f"attempt-{number}.plan.json"
    argsfile, output = work / f"attempt-{number}.args", work / f"attempt-{number}.out"
    # --deselect matches node id prefixes; suite node ids all end in "[<params>]", so prefix = exact.
    argsfile.write_text("".join(f"--deselect={nodeid}\n" for nodeid in ledger.records))
    command = pytest_command(spec, results, plan, argsfile, limits, clauses, pytest_args)
    stream = _Follower(results.with_suffix(".jsonl"))
    running, since = None, 0.0
    with open(output, "w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)  # its own process group: we can kill it whole
        try:
            while True:
                exited = process.poll() is not None
                for event in stream.events():
                    if event.get("event") == "start":
                        running, since = event["nodeid"], time.monotonic()
                    elif event.get("event") == "record":
                        running = None
                        attempt.new_records += 1
                        on_record(ledger.record(event))
                if exited:
                    break
                now = time.monotonic()
                if now >= deadline:
                    attempt.killed = "run"
                elif running and now - since > limits.test_timeout + limits.grace:
                    attempt.killed = "test"
                if attempt.killed:
                    _kill(process)
                    break
                time.sleep(POLL_S)
        finally:
            if process.poll() is None:
                _kill(process)
    attempt.rc = process.returncode
    attempt.running, attempt.running_for = running, (time.monotonic() - since if running else 0.0)
    attempt.output = output.read_text(encoding="utf-8", errors="replace")
    attempt.clean = results.exists() and not attempt.killed
    if plan.exists():
        ledger.plan(json.loads(plan.read_text(encoding="utf-8")))
    return attempt


def _record_death(ledger: Ledger, attempt: Attempt, limits: Limits, log: Path) -> Record:
    """The CRASH or TIMEOUT record of the test the attempt's process ended in."""
    seconds = attempt.running_for
    if attempt.killed == "run":
        outcome, why = "timeout", f"the whole-run bound of {limits.run_timeout:g} s expired while this test ran"
    elif attempt.killed == "test":
        outcome, why = "timeout", (f"still running {seconds:.0f} s after it started (limit {limits.test_timeout:g} s); "
                                   "pytest-timeout could not stop it, so the supervisor killed the process")
    elif TIMEOUT_BANNER.search(attempt.output) or seconds >= limits.test_timeout:
        outcome, why = "timeout", f"did not finish within {limits.test_timeout:g} s (pytest-timeout ended the process)"
    else:
        outcome, why = "crash", f"the test process died during this test ({_exit_status(attempt.rc)})"
    tail = _tail(_without_runner_frames(attempt.output), TAIL_LINES)
    message = f"{why}; last output (all of it in {log.name}):\n{tail}" if tail else f"{why} (output in {log.name})"
    return ledger.died(attempt.running, outcome, message, seconds)


def _exit_status(rc: int | None) -> str:
    if rc is not None and rc < 0:
        try:
            return f"killed by signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit code {rc}"


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


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


def _tail(text: str, lines: int) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _now() -> str:
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class _Follower:
    """Yields the complete JSON lines appended to a file since the last call (the file may not exist yet)."""

    def __init__(self, path: Path):
        self.path, self.offset, self.partial = path, 0, b""

    def events(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except FileNotFoundError:
            return
        self.offset += len(chunk)
        *lines, self.partial = (self.partial + chunk).split(b"\n")
        for line in lines:
            if line.strip():
                yield json.loads(line)
