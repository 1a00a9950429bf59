"""Runs the suite against one (implementation, variant, device), surviving crashes and hangs.

The run's pytest runs in a *run process* forked from a pre-imported zygote (see worker.py); after
collection it forks one *attempt* at a time on request. The shared JSONL stream says which test is
running; when an attempt dies, that test gets a CRASH record (a TIMEOUT one if pytest-timeout ended
it or it ran past its limit), and the next attempt runs the tests still left. An attempt that ends
with tests left counts as dying in the test it was in, even when pytest closed its session and wrote
its results (an INTERNALERROR, an interrupt): a run is finished only when every planned test has a
record. After
``Limits.cut_after`` timeouts, later tests run under the shorter ``Limits.cut_timeout`` (a deadlock
in one feature usually hangs many tests; the TIMEOUT message names the limit that applied; slow tests,
property-based or multi-process, have ``Limits.slow_timeout``, cut to ``Limits.slow_cut_timeout``: they take
seconds, not milliseconds, and tens of seconds on a busy machine), and the
tests left are split across ``Limits.lanes`` lanes (run processes of their own) that run side by
side: a hung test only waits, so waiting in parallel costs little CPU. After
``Limits.abandon_after`` crashes or timeouts in a row in one test file with no pass between, the file
is judged hopeless and its tests left get NOT-RUN records saying why (an attempt running one of them in
another lane is stopped): the sweeps hold thousands of tests, each of which would cost a limit. A
whole-run bound stops everything: the running test gets a TIMEOUT record, every test not yet run a
NOT-RUN one. The merged results are written atomically to ``<out>/<name>.json``, as they stand every
few seconds while the run goes on (each test not finished yet NOT RUN, so a run cut short still leaves
them) and whole at its end; all output goes to ``<out>/<name>.log``. A stop (a signal to ``python -m
conformance run``) ends the attempts running, each with a SIGTERM and time to clean up before a SIGKILL,
and leaves the results as they stand.

Here: the lanes and the run policy they apply (the limits themselves are policy.py's). How a lane
starts, follows and ends its processes is processes.py's; how a test its attempt died in is written up
(CRASH or TIMEOUT), deaths.py's; the bookkeeping of records, ledger.py's.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from conformance.plugin import reproducers
from conformance.data.expectations import EXPECTATIONS_PATH, Breakage, Expectations, run_level, stale_declarations
from conformance.data.results import Record, now, write_results
from conformance.run.deaths import Attempt, record_death, tail
from conformance.run.ledger import DEATHS, Ledger, test_file
from conformance.run.policy import Limits, RunSpec
from conformance.run.processes import POLL_S, RunProcesses

__all__ = ["Limits", "Outcome", "RunError", "RunSpec", "supervise"]

STOP_GRACE_S = 10.0  # how long a stopped attempt may take to clean up after its SIGTERM (its pytest tears down)
SAVE_EVERY_S = 5.0  # how often a run's results file is rewritten while the run goes on (1 MB with the sweeps)
UNFINISHED = "not finished when this results file was written: the run was cut short (killed or stopped) while it went on"
COLLECTION_ERROR = re.compile(r"^_+ ERROR collecting (.+?) _+$", re.M)  # a test file pytest could not import


class RunError(Exception):
    """The run produced no results at all (e.g. a bad --impl): the message says why."""


@dataclass
class Outcome:
    path: Path
    log: Path
    records: list[Record]
    attempts: int
    seconds: float
    counts: dict[str, int] = field(default_factory=dict)
    collection_errors: list[str] = field(default_factory=list)  # test files pytest could not import
    stale_declarations: list[Breakage] = field(default_factory=list)  # declared, but none of the row's tests failed
    stopped: bool = False  # by ``stop``: the results are as they stood, each test not finished NOT RUN
    modules_not_run: list[dict] = field(default_factory=list)  # whole areas that skipped at collection, and why


def supervise(spec: RunSpec, out_dir: Path, limits: Limits = Limits(), *, clauses=(), pytest_args=(),
              on_record: Callable[[Record], None] = lambda record: None,
              on_plan: Callable[[int], None] = lambda planned: None,
              stop: threading.Event | None = None) -> Outcome:
    """Run the suite for ``spec``; once ``stop`` is set (a signal to the runner), end the attempts running
    (each gets a SIGTERM, and ``STOP_GRACE_S`` to clean up, before SIGKILL), start none, and write the results
    as they stand. ``on_record`` hears of each record as the ledger takes it in, ``on_plan`` of the number of
    tests planned whenever it grows (after a collection)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    log = out_dir / f"{spec.name}.log"
    log.write_text("")
    started = time.monotonic()
    path = out_dir / f"{spec.name}.json"
    # The lanes' pytest write the reproducer scripts beside the run's results file, not beside their own (in the
    # lanes' temporary folders); the scripts of an earlier run of this name go, as its results file does.
    scripts = reproducers.beside(path).resolve()
    shutil.rmtree(scripts, ignore_errors=True)
    pytest_args = [*pytest_args, f"--conformance-reproducers={scripts}"]
    run = _Run(spec, limits, clauses, pytest_args, log, path, started, on_record, on_plan, stop or threading.Event())
    with tempfile.TemporaryDirectory(prefix="conformance-run-") as work:
        lanes = [_Lane(run, Path(work) / "lane-1")]
        try:
            if lanes[0].run(until_cut=limits.lanes > 1):
                # The run hangs again and again (a deadlock in a feature): hung tests wait, they do not
                # compute, so the tests left are split across lanes that wait side by side.
                left = run.remaining()
                slices = [left[i::limits.lanes] for i in range(min(limits.lanes, len(left)))]
                lanes += [_Lane(run, Path(work) / f"lane-{i + 1}") for i in range(1, len(slices))]
                for lane, tests in zip(lanes, slices):
                    lane.only = set(tests)
                with ThreadPoolExecutor(max_workers=len(lanes)) as pool:
                    list(pool.map(_Lane.run, lanes))
        finally:
            for lane in lanes:
                lane.processes.close()
    ledger, attempts = run.ledger, sorted(run.attempts, key=lambda a: a.number)
    if ledger.header is None and run.stop.is_set():
        raise RunError(f"{spec.name}: stopped before pytest had collected the tests")
    if ledger.header is None:
        raise RunError(f"{spec.name}: pytest exited with code {attempts[-1].rc} before collecting any test:\n"
                       f"{tail(attempts[-1].output, 15)}")
    seconds = time.monotonic() - started
    header = _supervisor_header(limits, attempts, seconds, log)
    stopped = run.stop.is_set()
    if stopped:  # as a run killed midway leaves them: not finished, no exit status
        results = ledger.results(UNFINISHED, finished=None, exit=None, supervisor=header)
    else:
        results = ledger.results(finished=now(), exit=attempts[-1].rc, supervisor=header)
    write_results(path, results)
    counts: dict[str, int] = {}  # verdict -> tests
    for record in results.records:
        counts[record.verdict] = counts.get(record.verdict, 0) + 1
    # Staleness is judged here, on the records of every attempt merged (an attempt sees only part of the row),
    # and only for a whole row: a run narrowed to some clauses may hold none of the row's failing tests.
    stale = [] if clauses or stopped else stale_declarations(results, run_level(Expectations.load(_expectations_path(pytest_args))))
    return Outcome(path, log, results.records, len(attempts), seconds, counts,
                   results.header["supervisor"]["collection_errors"], stale, stopped,
                   results.header.get("modules_not_run", []))


def _supervisor_header(limits: Limits, attempts: list[Attempt], seconds: float, log: Path) -> dict:
    """The results header's account of how the run was supervised (attempts so far, while it goes on)."""
    return {
        "attempts": len(attempts),
        "test_timeout_s": limits.test_timeout,
        "cut_timeout_s": limits.cut_timeout,
        "slow_timeout_s": limits.slow_limit,
        "slow_cut_timeout_s": limits.slow_limit_under(limits.for_run(limits.cut_after)),
        "cut_after_timeouts": limits.cut_after,
        "abandon_after": limits.abandon_after,
        "lanes": len({a.lane for a in attempts}),
        "run_timeout_s": limits.run_timeout,
        "timeout_method": "thread",
        "seconds": round(seconds, 1),
        "log": log.name,
        "collection_errors": sorted({m for a in attempts for m in COLLECTION_ERROR.findall(a.output)}),
    }


def _expectations_path(pytest_args) -> Path:
    """The expectations file the run's pytest judges by: ``--expectations=FILE`` among its arguments, or the default."""
    given = [a.split("=", 1)[1] for a in pytest_args if a.startswith("--expectations=")]
    return Path(given[-1]) if given else EXPECTATIONS_PATH


class _Run:
    """What the lanes of one run share: the ledger (behind a lock), the log, the results file, the
    bound, progress, the stop."""

    def __init__(self, spec, limits, clauses, pytest_args, log: Path, path: Path, started: float, on_record,
                 on_plan, stop: threading.Event):
        self.spec, self.limits, self.clauses, self.pytest_args = spec, limits, clauses, pytest_args
        self.log, self.path, self.on_record, self.on_plan, self.stop = log, path, on_record, on_plan, stop
        self.started, self.deadline = started, started + limits.run_timeout
        self.ledger = Ledger()
        self.abandoned: list[str] = []  # the test files given up on, in order (Limits.abandons reads how many)
        self.lock = threading.Lock()
        self.attempts: list[Attempt] = []
        self.saved, self.unsaved = float("-inf"), False  # when the results file was last written; changed since?

    def record(self, make: Callable[[], Record | None | list[Record | None]]) -> None:
        """Change the ledger (``make`` returns what the ledger took in: None for a test that had a record
        already), give up on the test files that became hopeless, report the new records and now and then
        save the results, one lane at a time."""
        with self.lock:
            made = make()
            added = [r for r in (made if isinstance(made, list) else [made]) if r is not None]
            added += self._abandon_hopeless_files(added)
            for record in added:
                self.on_record(record)
            self.unsaved = True
            self._save_if_due()

    def _abandon_hopeless_files(self, added: list[Record]) -> list[Record]:
        """The one place the runner gives up on a test file: once its streak (crashes and timeouts in a
        row, no pass between) reaches ``Limits.abandon_after``, its tests left get NOT-RUN records."""
        files = dict.fromkeys(test_file(r.nodeid) for r in added if r.status in DEATHS)
        closed = []
        for file in files:
            if self.limits.abandons(self.ledger.streak(file), len(self.abandoned)):
                closed += self.ledger.close_remaining(self._abandoned_because(file), file)
                self.abandoned.append(file)
                if self.limits.abandons_run(len(self.abandoned)):
                    return closed + self.ledger.close_remaining(
                        f"run abandoned after {len(self.abandoned)} of its test files were (twice --abandon-after "
                        f"{self.limits.abandon_after}): the implementation dies wherever it is tested, so the tests "
                        "left were not run")
        return closed

    def _abandoned_because(self, file: str) -> str:
        streak = self.ledger.streak(file)
        kinds = " or ".join(plural for plural, status in (("crashes", "crash"), ("timeouts", "timeout")) if status in streak)
        after = f"--abandon-after {self.limits.abandon_after}" if len(streak) >= self.limits.abandon_after else \
            f"the run had abandoned {len(self.abandoned)} files already"
        return (f"run abandoned after {len(streak)} consecutive {kinds} in {Path(file).name} with no pass between "
                f"({after}): its tests left were not run")

    def save_if_due(self) -> None:
        """Called while attempts run, so that the last changes are saved even when no record follows them."""
        with self.lock:
            self._save_if_due()

    def _save_if_due(self) -> None:
        """Write the results as they stand, each test not finished yet NOT RUN, at most every ``SAVE_EVERY_S``:
        a run cut short (the runner killed, the machine's job limit) still leaves a results file."""
        now = time.monotonic()
        if not self.unsaved or self.ledger.header is None or now < self.saved + SAVE_EVERY_S:
            return
        self.saved, self.unsaved = now, False
        header = _supervisor_header(self.limits, self.attempts, now - self.started, self.log)
        write_results(self.path, self.ledger.results(UNFINISHED, finished=None, exit=None, supervisor=header))

    def given_up(self, nodeid: str) -> bool:
        """Whether the test has a record although an attempt runs it (another lane gave up on it)."""
        with self.lock:
            return nodeid in self.ledger.records

    def remaining(self, only: set[str] | None = None) -> list[str]:
        with self.lock:
            return [n for n in self.ledger.remaining() if only is None or n in only]

    def limit_of(self, nodeid: str, limit: float) -> float:
        """A test's limit in an attempt whose limit is ``limit`` (a slow test has its own)."""
        return self.limits.slow_limit_under(limit) if self.ledger.planned.get(nodeid, {}).get("slow") else limit

    def timeouts(self) -> int:
        with self.lock:
            return sum(r.status == "timeout" for r in self.ledger.records.values())

    def skip(self, only: set[str] | None) -> list[str]:
        """The tests an attempt of a lane must not run: those recorded, and those of other lanes."""
        with self.lock:
            return [n for n in {**self.ledger.planned, **self.ledger.records}
                    if n in self.ledger.records or (only is not None and n not in only)]

    def finished(self, attempt: Attempt) -> None:
        with self.lock:
            attempt.number = len(self.attempts) + 1
            self.attempts.append(attempt)
            with open(self.log, "a", encoding="utf-8") as f:
                f.write(f"===== attempt {attempt.number} (lane {attempt.lane}, limit {attempt.limit:g} s): "
                        f"exit {attempt.rc} =====\n{attempt.output}\n")


class _Lane:
    """Attempts one after another over the run's tests (``only``: a slice of them), until every
    one has a record, the whole-run bound expires, attempts stop making progress, or the run is stopped."""

    def __init__(self, run: _Run, work: Path):
        work.mkdir()
        self.shared, self.only = run, None
        self.number = int(work.name.rsplit("-", 1)[1])
        self.processes = RunProcesses(run.spec, work, run.limits, run.clauses, run.pytest_args)

    def run(self, until_cut: bool = False) -> bool:
        """Returns True when it stopped because the run reached the cut (``until_cut``) with tests left."""
        run, limits = self.shared, self.shared.limits
        while not run.stop.is_set():
            limit = limits.for_run(run.timeouts())
            attempt = _run_attempt(self.processes, run, self.number, run.skip(self.only), limit)
            run.finished(attempt)
            if attempt.killed == "stopped":  # the test it was in did not die: it was not let finish
                return False
            # Finished only when every planned test has a record: pytest also writes its results file when
            # it stops early (an INTERNALERROR, a KeyboardInterrupt), with the tests after that never run.
            if attempt.clean and not run.remaining(self.only):
                return False
            if attempt.running:
                run.record(lambda: record_death(run.ledger, attempt, limits, run.log))
            if attempt.killed == "run" or time.monotonic() >= run.deadline:
                run.record(lambda: run.ledger.close_remaining(f"the whole-run bound of {limits.run_timeout:g} s expired"))
                return False
            left = run.remaining(self.only)
            if not left:
                return False
            if not attempt.running and not attempt.new_records:  # no progress: restarting would loop
                run.record(lambda: [run.ledger.died(n, "not_run", f"pytest exited with code {attempt.rc} "
                                                    f"between tests (see {run.log.name})") for n in left])
                return False
            if until_cut and run.timeouts() >= limits.cut_after and len(left) > 1:
                return True
        return False


def _run_attempt(processes: RunProcesses, run: _Run, lane: int, skip: list[str], limit: float) -> Attempt:
    attempt = Attempt(0, limit, lane)
    handle = processes.begin(skip, limit)
    running, since, planned = None, 0.0, False
    while True:
        ended = handle.ended()
        if not planned and processes.plan.exists():  # written after collection: the tests' own limits are in it
            planned = _take_plan(processes, run)
        for event in processes.stream.events():
            if event.get("event") == "start":
                running, since = event["nodeid"], time.monotonic()
            elif event.get("event") == "record":
                running = None
                attempt.new_records += 1
                run.record(lambda: run.ledger.record(event))
        if ended:
            break
        run.save_if_due()
        now = time.monotonic()
        if run.stop.is_set():
            attempt.killed = "stopped"
        elif running and run.given_up(running):  # its test file was abandoned, or the run closed, in another lane
            attempt.killed = "given up"
        elif now >= run.deadline:
            attempt.killed = "run"
        elif running and now - since > run.limit_of(running, limit) + run.limits.grace:
            attempt.killed = "test"
        if attempt.killed:
            handle.kill(grace=STOP_GRACE_S if attempt.killed == "stopped" else 0.0)
            break
        time.sleep(POLL_S)
    attempt.rc = handle.rc
    attempt.running, attempt.running_for = running, (time.monotonic() - since if running else 0.0)
    attempt.running_limit = run.limit_of(running, limit) if running else limit
    attempt.output = handle.output()
    attempt.clean = processes.results.exists() and not attempt.killed
    if not planned and processes.plan.exists():
        _take_plan(processes, run)
    return attempt


def _take_plan(processes: RunProcesses, run: _Run) -> bool:
    plan = json.loads(processes.plan.read_text(encoding="utf-8"))
    run.record(lambda: run.ledger.plan(plan) or [])
    run.on_plan(len(run.ledger.planned))
    return True
