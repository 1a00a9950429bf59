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

from conformance.data.expectations import stale_message
from conformance.run.policy import Limits, RunSpec
from conformance.run.progress import Progress
from conformance.run.supervisor import Outcome, RunError, supervise
from conformance.data.vocabulary import DEVICES, VARIANTS, severe

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
    """Run every spec, ``jobs`` at a time; show each run's progress while it goes on, and a line per run as it ends.
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

    def one(spec: RunSpec) -> Outcome | None:
        if stop.is_set():
            return None
        label = _label(spec)
        progress.started(label)
        try:
            outcome = supervise(spec, out_dir, limits, clauses=clauses, pytest_args=pytest_args,
                                on_record=lambda record: progress.recorded(label, record),
                                on_plan=lambda planned: progress.planned(label, planned), stop=stop)
        except RunError as exc:
            progress.ended(label, f"no results: {exc}")
            return None
        progress.ended(label, f"{_summary(outcome)}{'  (stopped)' * outcome.stopped}  -> {outcome.path}")
        return outcome

    with (_stopped_by_signals() as stop, Progress(stream, width=max(len(_label(s)) for s in specs)) as progress,
          ThreadPoolExecutor(max_workers=max(1, jobs)) as pool):
        outcomes = list(pool.map(one, specs))
    if stop.signal:
        stream.write(f"stopped by {signal.Signals(stop.signal).name}: the results files hold the tests as they stood\n")
        return 128 + stop.signal
    if any(o is None for o in outcomes):
        return 2
    for outcome in outcomes:
        for breakage in outcome.stale_declarations:
            stream.write(stale_message(breakage) + "\n")
    return int(any(o.counts.get(k) for o in outcomes for k in severe(strict_levels))
               or any(o.collection_errors or o.stale_declarations for o in outcomes))


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
    not_run = "".join(f"; area not run: {m['area']} ({m['reason'][:100]})" for m in outcome.modules_not_run)
    return f"{counts or 'no tests'} ({outcome.seconds:.1f} s{restarts}){broken}{not_run}"


def _label(spec: RunSpec) -> str:
    return f"{spec.impl} · {spec.variant} · {spec.device}"


def _unique(values):
    return list(dict.fromkeys(values))
