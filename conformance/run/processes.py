"""Process control for one lane of a run, and the results stream it follows.

A lane's pytest runs in a *run process* (worker.py) that the lane starts, asks for attempts over the
tests left, and ends with whatever it left running (its process group, and each attempt's). Which test
an attempt is in, and what it recorded, the lane reads from the attempt's JSONL results stream
(:class:`Follower`): a ``start`` line before each test, a ``record`` line after it.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import time
from pathlib import Path

from conformance.data.ids import SUITE_DIR
from conformance.plugin import staleness
from conformance.run.policy import Limits, RunSpec

POLL_S = 0.05

# What the run processes run (worker.serve); the supervisor's tests replace it with a scripted stand-in.
RUN_TARGET = "conformance.run.worker:serve"


def pytest_args_for(spec: RunSpec, results: Path, plan: Path, limit: float, clauses=(), pytest_args=(),
                    deselect=()) -> list[str]:
    """The arguments of the run's in-process ``pytest.main``."""
    return [
        "-p", "conformance.plugin", "-p", "conformance.run.plan",
        # An attempt runs part of the row: the supervisor judges staleness over the attempts' records merged.
        "-p", f"no:{staleness.NAME}",
        "-p", "no:cacheprovider", "-q", "-rN", "--continue-on-collection-errors",
        # The zygote imported hypothesis and pytest-timeout before pytest could rewrite their asserts: expected.
        "-W", "ignore::pytest.PytestAssertRewriteWarning",
        f"--impl={spec.impl}", f"--variant={spec.variant}", f"--device={spec.device}",
        f"--results={results}", f"--conformance-plan={plan}",
        f"--timeout={limit:g}", "--timeout-method=thread",
        # Python's own tracebacks in the log: pytest's long ones parse the source file of every frame, most of the
        # time of a run whose thousands of sweep tests all fail (a record's message is the exception only).
        "--tb=native",
        *[f"--clause={c}" for c in clauses], *pytest_args,
        # --deselect matches node id prefixes; suite node ids all end in "[<params>]", so prefix = exact.
        *[f"--deselect={nodeid}" for nodeid in deselect], str(SUITE_DIR),
    ]


class RunProcesses:
    """The run's processes (worker.py): one collected run process that forks each attempt (CPU
    runs), or one fresh run process per attempt (CUDA runs, where a fork after CUDA is unsafe)."""

    def __init__(self, spec: RunSpec, work: Path, limits: Limits, clauses, pytest_args):
        self.spec, self.work, self.limits, self.clauses, self.pytest_args = spec, work, limits, clauses, pytest_args
        self.fork_attempts = spec.device == "cpu"
        self.process = self.conn = None
        self.attempt: int | None = None  # the pid (= process group) of a forked attempt still running
        self.output = work / "output.txt"
        self.output.touch()
        self.started = 0

    def begin(self, skip: list[str], limit: float) -> "AttemptHandle":
        """Start an attempt that runs every collected test not in ``skip`` under ``limit``."""
        fresh = not self.fork_attempts or self.process is None or self.process.exitcode is not None
        if fresh:
            self._stop()
        offset = self.output.stat().st_size  # the attempt's output follows (with collection's, when fresh)
        if fresh:
            self.started += 1  # a fresh run process writes its own results, plan and stream
            self.results = self.work / f"results-{self.started}.json"
            self.plan = self.work / f"plan-{self.started}.json"
            args = pytest_args_for(self.spec, self.results, self.plan, limit, self.clauses, self.pytest_args,
                                   deselect=() if self.fork_attempts else skip)
            from conformance.run import worker  # imports pytest: not needed to read Limits (`report`)

            module, name = RUN_TARGET.split(":")
            target = getattr(importlib.import_module(module), name)
            self.process, self.conn = worker.start_run_process(target, args, str(self.output), self.fork_attempts)
            self.stream = Follower(self.results.with_suffix(".jsonl"))
        self._send({"skip": list(skip), "timeout": limit, "slow_timeout": self.limits.slow_limit_under(limit)})
        return AttemptHandle(self, offset)

    def _send(self, message) -> None:
        try:
            self.conn.send(message)
        except OSError:
            pass  # the run process is gone (e.g. a usage error): the attempt sees that it exited

    def answers(self):
        """The run process's answers not read yet (see worker.AttemptServer), keeping ``attempt`` current."""
        try:
            while self.conn.poll():
                answer = self.conn.recv()
                self.attempt = None if "exit" in answer else answer.get("pid", self.attempt)
                yield answer
        except (EOFError, OSError):
            pass  # the run process is gone: its exit code follows

    def _stop(self) -> None:
        if self.process is not None:
            for _ in self.answers():  # an attempt the run process has just started, that no lane has heard of
                pass
        if self.attempt is not None:  # e.g. the supervisor is interrupted while an attempt runs
            _kill_group(self.attempt)
            self.attempt = None
        if self.process is None:
            return
        self._send(None)
        self.process.join(timeout=5)
        _kill_group(self.process.pid)  # with whatever it left running
        self.process.join()
        self.conn.close()
        self.process = None

    close = _stop


class AttemptHandle:
    """One attempt: a forked child of the run process, or the run process itself."""

    def __init__(self, processes: RunProcesses, offset: int):
        self.processes, self.offset = processes, offset
        self.pid: int | None = None  # the attempt's process (group), once the run process said
        self.rc: int | None = None

    def ended(self) -> bool:
        """Whether the attempt has ended; then ``rc`` is its exit code."""
        p = self.processes
        for answer in p.answers() if self.rc is None else ():
            self.pid = answer.get("pid", self.pid)
            self.rc = answer.get("exit")
            if self.rc is not None:
                break
        if self.rc is not None:
            return True
        if p.process.exitcode is not None:  # the run process ended: it ran the attempt, or died before
            self.rc = p.process.exitcode
            return True
        return False

    def kill(self, grace: float = 0.0) -> None:
        """End the attempt and whatever it started (its process group); wait until it has ended. With
        ``grace``, a SIGTERM first, and that long to end by itself: pytest then tears its fixtures down (the
        distributed area's ranks and their folder go with them); SIGKILL ends what is still there."""
        p = self.processes
        self.ended()  # learn the attempt's pid, should the run process have just said it
        group = self.pid if p.fork_attempts and self.pid is not None else p.process.pid
        if grace:
            _signal_group(group, signal.SIGTERM)
            self._wait(grace)
        _signal_group(group, signal.SIGKILL)
        self._wait(30)

    def _wait(self, seconds: float) -> None:
        give_up = time.monotonic() + seconds
        while not self.ended() and time.monotonic() < give_up:
            time.sleep(POLL_S / 10)

    def output(self) -> str:
        with open(self.processes.output, "rb") as f:
            f.seek(self.offset)
            return f.read().decode("utf-8", errors="replace")


def _kill_group(pid: int) -> None:
    _signal_group(pid, signal.SIGKILL)


def _signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


class Follower:
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
