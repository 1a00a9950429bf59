"""``python -m conformance run``: the suite against several implementations × variants × devices,
one supervised pytest run (and one results file) each, with progress on the terminal."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from itertools import product
from pathlib import Path

from conformance.results import Record
from conformance.run.policy import Limits, RunSpec
from conformance.run.supervisor import Outcome, RunError, supervise
from conformance.vocabulary import DEVICES, VARIANTS, VERDICTS, severe

__all__ = ["Limits", "RunError", "RunSpec", "expand", "run_all", "shard", "supervise"]


def expand(impls, variants, devices) -> list[RunSpec]:
    """The runs to make: ``both`` / ``all`` stand for every variant / device, each run on its own."""
    variants = _unique(v for value in variants for v in (VARIANTS if value == "both" else (value,)))
    devices = _unique(d for value in devices for d in (DEVICES if value == "all" else (value,)))
    return [RunSpec(i, v, d) for i, v, d in product(_unique(impls), variants, devices)]


def shard(specs: list[RunSpec], index: int, count: int) -> list[RunSpec]:
    """Shard ``index`` of ``count`` (1-based): every count-th run of the expanded matrix, starting at
    the index-th. The same arguments give every machine the same split, and the shards together are
    the whole matrix, each run in exactly one (so their results files merge into one report)."""
    if not 1 <= index <= count:
        raise ValueError(f"shard {index}/{count}: the index must be between 1 and {count}")
    return specs[index - 1::count]


def run_all(specs: list[RunSpec], out_dir: Path, limits: Limits, *, clauses=(), pytest_args=(), jobs=1,
            stream=None, strict_levels: bool = False) -> int:
    """Run every spec; print a line per run (with a live dot stream when runs go one at a time).
    Returns the exit code: 0 all good, 1 some test failed/crashed/timed out/errored or a declared breakage
    went stale, 2 a run gave no results, 128 + the signal's number when a SIGINT, SIGTERM or SIGHUP stopped
    the runs (each leaves its results as they stood, and nothing running). Failures of clauses that do not
    bind (SHOULD, MAY, OBSERVED) count only with ``strict_levels``."""
    stream = stream or sys.stdout
    if strict_levels:
        pytest_args = [*pytest_args, "--strict-levels"]
    if not specs:
        stream.write("no runs in this shard\n")
        return 0
    lock = threading.Lock()
    width = max(len(_label(s)) for s in specs)

    def one(spec: RunSpec) -> Outcome | None:
        if stop.is_set():
            return None
        live = jobs == 1
        if live:
            stream.write(f"{_label(spec):<{width}}  ")
            stream.flush()

        def progress(record: Record) -> None:
            if live:  # one character per finished test, as pytest draws them
                stream.write(VERDICTS[record.verdict].progress)
                stream.flush()

        try:
            outcome = supervise(spec, out_dir, limits, clauses=clauses, pytest_args=pytest_args, on_record=progress,
                                stop=stop)
        except RunError as exc:
            with lock:
                stream.write(f"{'' if live else _label(spec) + '  '}no results: {exc}\n")
            return None
        with lock:
            prefix = "  " if live else f"{_label(spec):<{width}}  "
            stream.write(f"{prefix}{_summary(outcome)}{'  (stopped)' * outcome.stopped}  -> {outcome.path}\n")
            stream.flush()
        return outcome

    with _stopped_by_signals() as stop, ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcomes = list(pool.map(one, specs))
    if stop.signal:
        stream.write(f"stopped by {signal.Signals(stop.signal).name}: the results files hold the tests as they stood\n")
        return 128 + stop.signal
    if any(o is None for o in outcomes):
        return 2
    for outcome in outcomes:
        for breakage in outcome.stale_breakages:
            stream.write(f"stale known breakage (no test of its row failed; remove it from expectations.toml): "
                         f"{breakage.impl} {breakage.variant or ''} {breakage.torch or ''}: {breakage.reason[:120]}\n")
    return int(any(o.counts.get(k) for o in outcomes for k in severe(strict_levels))
               or any(o.collection_errors or o.stale_breakages for o in outcomes))


class _Stop(threading.Event):
    signal: int | None = None  # the first signal that stopped the runs


@contextlib.contextmanager
def _stopped_by_signals(signals=(signal.SIGINT, signal.SIGTERM, signal.SIGHUP)):
    """While inside, these signals set the stop the runs watch, instead of ending this process at once (or,
    Ctrl-C, raising in the main thread while the runs' threads go on): the runs then end their processes
    and write their results, and nothing is left running. Elsewhere than in the main thread, no signal
    handler can be set: the stop is then never set."""
    stop = _Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handle(signum, frame):
        stop.signal = stop.signal or signum
        stop.set()

    previous = {signum: signal.signal(signum, handle) for signum in signals}
    try:
        yield stop
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _summary(outcome: Outcome) -> str:
    ordered = sorted(outcome.counts.items(), key=lambda kv: -kv[1])
    counts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in ordered)
    restarts = f", {outcome.attempts} attempts" if outcome.attempts > 1 else ""
    broken = f"; {len(outcome.collection_errors)} test file(s) failed to collect (see {outcome.log})" * bool(outcome.collection_errors)
    return f"{counts or 'no tests'} ({outcome.seconds:.1f} s{restarts}){broken}"


def _label(spec: RunSpec) -> str:
    return f"{spec.impl} · {spec.variant} · {spec.device}"


def _unique(values):
    return list(dict.fromkeys(values))
