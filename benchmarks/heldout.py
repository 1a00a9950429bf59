"""Benchmark: how many of the held-out set (tests/heldout/) the default suite flags (issue 44's measure).

    python benchmarks/heldout.py [--jobs 2] [NAME ...] [--json out.json]

Each held-out implementation is torch with one bug from a real report. It is run as a user runs the suite,
``pytest --impl=tests.heldout.<name>`` (the default conformance-ci profile), in a process of its own, the
hand-written areas first and the sweeps and models last; the run stops at the first test that flags it. It is
flagged by a test that fails, is judged SHOULD unmet or differs from torch, or times out, where torch under
another name (tests/correct/torch_alias.py, run once as the baseline) does not: a held-out implementation is
torch with one thing broken, and inherits the rest (torch's own SHOULD failures, its known upstream bugs).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BASELINE = "tests.correct.torch_alias"
PER_TEST_TIMEOUT = 60  # a bug that deadlocks (a thread barrier) reads as a timeout, which flags it
RUN_TIMEOUT = 1800


def _suite_files() -> list[str]:
    """The suite's modules, the long sweeps and the models last (a held-out bug flagged early costs less)."""
    from conformance.data.ids import SUITE_DIR

    files = sorted(str(p.relative_to(ROOT)) for p in SUITE_DIR.glob("test_*.py"))
    return sorted(files, key=lambda f: ("test_sweep_" in f or "test_models" in f, f))


def _flagging(record) -> bool:
    from conformance.data.vocabulary import VIOLATIONS

    return record.verdict in VIOLATIONS or record.status in ("crash", "timeout")


class StopAtTheFirstNewFailure:
    """A pytest plugin object: ends the run at the first flagging test that the baseline did not flag."""

    def __init__(self, baseline: set[str]):
        self.baseline, self.session, self.first = baseline, None, None

    def pytest_sessionstart(self, session):
        self.session = session

    def pytest_runtest_logreport(self, report):
        from conformance.data import facts
        from conformance.plugin.recording import message_of, status_of
        from conformance.data.results import Record

        test = facts.read(report)
        if test is None or report.when != "call" and not report.failed:
            return
        record = Record(report.nodeid, test, status_of(report), message_of(report))
        if _flagging(record) and report.nodeid not in self.baseline and self.first is None:
            self.first = {"test": report.nodeid, "clauses": list(test.clauses), "verdict": record.verdict,
                          "message": record.message.replace("\n", " ")[:300]}
            self.session.shouldstop = "the held-out implementation is flagged"


def run_in_process(impl: str, baseline_file: str | None, out: str) -> None:
    """(In the child process) run the suite against impl; write what flagged it (or the flagging tests)."""
    import pytest

    baseline = set(json.loads(Path(baseline_file).read_text())) if baseline_file else None
    stopper = StopAtTheFirstNewFailure(baseline or set())
    results = Path(out).with_suffix(".results.json")
    args = [f"--impl={impl}", f"--results={results}", "-q", "-p", "no:cacheprovider", f"--timeout={PER_TEST_TIMEOUT}",
            *_suite_files()]
    pytest.main(args, plugins=[stopper] if baseline is not None else [])
    if baseline is None:  # the baseline run: every flagging test
        from conformance.data.results import read_results

        Path(out).write_text(json.dumps(sorted(r.nodeid for r in read_results(results).records if _flagging(r))))
    else:
        Path(out).write_text(json.dumps(stopper.first))


def _child(impl: str, baseline_file: str | None, out: Path) -> tuple[str, float]:
    """Run the suite in a process of its own; how it ended ("" when it finished, else why not), and the seconds."""
    started = time.time()
    command = [sys.executable, __file__, "--child", impl, "--out", str(out)] + (["--baseline", baseline_file] if baseline_file else [])
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"the suite's process did not finish within {RUN_TIMEOUT} s", time.time() - started
    ended = "" if out.exists() else f"the suite's process died (exit {done.returncode}): {(done.stdout + done.stderr)[-600:]}"
    return ended, time.time() - started


def measure(name: str, baseline_file: str) -> dict:
    from tests.heldout import load

    module = load(name)
    with tempfile.TemporaryDirectory() as temp:
        out = Path(temp) / "first.json"
        ended, seconds = _child(f"tests.heldout.{name}", baseline_file, out)
        first = json.loads(out.read_text()) if out.exists() else None
    if ended:  # the run hung or died before it could say: the suite's runner records a crash or a timeout
        first = {"test": "-", "clauses": [], "verdict": "timeout" if "within" in ended else "crash", "message": ended}
    return {"name": name, "report": module.REPORT, "kind": module.KIND, "breaks": module.BREAKS,
            "flagged": first is not None, "first": first, "seconds": round(seconds)}


def main():
    from tests.heldout import heldout_names

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="held-out modules to run (default: all)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", default=None, help="write the measurements here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--baseline", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return run_in_process(args.child, args.baseline, args.out)
    names = args.names or heldout_names()
    started = time.time()
    with tempfile.TemporaryDirectory() as temp:
        baseline = Path(temp) / "baseline.json"
        _child(BASELINE, None, baseline)
        print(f"baseline ({BASELINE}): {len(json.loads(baseline.read_text()))} flagging test(s), "
              f"{time.time() - started:.0f} s", flush=True)
        results = []
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for result in pool.map(lambda n: measure(n, str(baseline)), names):
                results.append(result)
                first = result["first"]
                where = (f"flagged by {first['test']} ({', '.join(first['clauses'])}: {first['verdict']}) {first['message'][:200]}"
                         if first else "MISSED")
                print(f"{result['name']} [{result['kind']}]: {where} ({result['seconds']} s)", flush=True)
    flagged = sum(r["flagged"] for r in results)
    print(f"\nflagged {flagged} of {len(results)}; {time.time() - started:.0f} s with {args.jobs} jobs")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
