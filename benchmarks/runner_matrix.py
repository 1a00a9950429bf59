"""Benchmark: wall time of ``python -m conformance run`` on the pathological matrix and the built-in one.

    python benchmarks/runner_matrix.py [--only pathological|builtin] [--json out.json] [--keep DIR]

* pathological: the three broken implementations of tests/broken (one kills its process, one hangs
  in backward, one raises messages full of markup), both variants, CPU, default options and -j 2, the
  whole suite with its sweeps (thousands of tests per run). Acceptance (issue 19): at most 300 s on a
  2-core machine, with CRASH and TIMEOUT cells, the markup escaped in the report, a results file per
  run, and no NOT-RUN record but those of test files the runner abandoned as hopeless (--abandon-after),
  each saying so.
* builtin: reference_impl and torch.utils.checkpoint, both variants, CPU, default options (-j is
  the machine's cores).

Each matrix runs as a user runs it (a fresh ``python -m conformance run``, then ``report``). Printed:
the wall time, per run the counts, attempts and seconds and the test files it abandoned, and the load
average before and after (the machine may be shared: the figures only mean something next to the load).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from conformance.report.layout import details_of  # noqa: E402
from conformance.data.results import read_results  # noqa: E402

MATRICES = {
    "pathological": (["tests.broken.kills_process", "tests.broken.hangs_in_backward", "tests.broken.markup_messages"],
                     ["-j", "2"]),
    "builtin": (["reference_impl", "torch.utils.checkpoint"], []),
}
LIMIT_S = 300  # the acceptance bound of the pathological matrix
# The message of a NOT-RUN record of a test file the runner abandoned (run/supervisor.py: _Run._abandoned_because).
ABANDONED = re.compile(r"^run abandoned after \d+ consecutive .*? in (\S+) ")


def run_matrix(name: str, out: Path) -> dict:
    impls, options = MATRICES[name]
    command = [sys.executable, "-m", "conformance", "run", *[a for i in impls for a in ("--impl", i)], *options,
               "--out", str(out)]
    load_before = os.getloadavg()
    started = time.monotonic()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    seconds = time.monotonic() - started
    load_after = os.getloadavg()
    page = out / "index.html"
    subprocess.run([sys.executable, "-m", "conformance", "report", str(out), "-o", str(page)], cwd=REPO, check=True,
                   capture_output=True)
    runs = {}
    for path in sorted(out.glob("*.json")):
        results = read_results(path)
        not_run = [ABANDONED.match(r.message) for r in results.records if r.status == "not_run"]
        supervised = results.header.get("supervisor", {})  # absent only from a run that never got past its plan
        runs[path.stem] = {"counts": dict(Counter(r.verdict for r in results.records)),
                           "attempts": supervised.get("attempts"), "seconds": supervised.get("seconds"),
                           "finished": results.header.get("finished") is not None,
                           "abandoned": sorted({m[1] for m in not_run if m}),
                           "not_run_unexplained": sum(m is None for m in not_run)}
    pages = [page, *(out / details_of(page.name)).glob("*.html")]
    html = "".join(p.read_text(encoding="utf-8") for p in pages)
    return {
        "matrix": name, "command": " ".join(command[1:]), "exit": done.returncode, "wall_s": round(seconds, 1),
        "cores": os.cpu_count(), "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after], "runs": runs, "report_bytes": len(html.encode()),
        "index_bytes": page.stat().st_size,
        "markup_escaped": "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html,
    }


def check_pathological(figures: dict) -> list[str]:
    """What the acceptance asks of the pathological matrix that these figures do not show."""
    totals = Counter()
    for run in figures["runs"].values():
        totals.update(run["counts"])
    problems = []
    if figures["wall_s"] > LIMIT_S:
        problems.append(f"took {figures['wall_s']} s > {LIMIT_S} s")
    if not totals["crash"] or not totals["timeout"]:
        problems.append(f"expected crash and timeout cells, got {dict(totals)}")
    unexplained = sum(run["not_run_unexplained"] for run in figures["runs"].values())
    if unexplained:
        problems.append(f"{unexplained} tests not run, not for an abandoned file")
    if not all(run["finished"] for run in figures["runs"].values()):
        problems.append("some results file is not a finished run's")
    if not figures["markup_escaped"]:
        problems.append("the markup is not (only) escaped in the report")
    if len(figures["runs"]) != 6:
        problems.append(f"{len(figures['runs'])} runs, expected 6")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(MATRICES), action="append")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, help="keep each matrix's results and report in DIR/<matrix>")
    args = parser.parse_args()
    report, failed = [], False
    for name in args.only or list(MATRICES):
        with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as scratch:
            out = args.keep / name if args.keep else Path(scratch)
            out.mkdir(parents=True, exist_ok=True)
            figures = run_matrix(name, out)
        if name == "pathological":
            figures["problems"] = check_pathological(figures)
            failed |= bool(figures["problems"])
        report.append(figures)
        print(f"{name}: {figures['wall_s']} s wall (exit {figures['exit']}), {figures['cores']} cores, load "
              f"{figures['load_before']} -> {figures['load_after']}, report {figures['report_bytes'] / 1e6:.2f} MB "
              f"(index {figures['index_bytes'] / 1e6:.2f} MB)")
        for run, data in figures["runs"].items():
            print(f"  {run:<55} {data['seconds']:>6} s  {data['attempts']:>3} attempts  {data['counts']}")
            if data["abandoned"]:
                print(f"  {'':<55} abandoned: {', '.join(data['abandoned'])}")
        if figures.get("problems"):
            print(f"  PROBLEMS: {'; '.join(figures['problems'])}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return int(failed)


if __name__ == "__main__":
    sys.exit(main())
