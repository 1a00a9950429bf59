"""Benchmark: the time of the op and module sweeps (conformance/suite/test_sweep_*.py), per variant.

    python benchmarks/sweep_budget.py [--impl reference_impl] [--profile ci] [--variant both]

Each variant runs in a fresh pytest process (collection included, so the one-off import of
torch.testing._internal, ~5 s, is counted), with the results file written to a temporary folder.
Reported per variant: wall time, the machine's load average before the run (the budget, <= 60 s
per variant for the default profile on the project's 2-core machine, means little on a loaded
machine), the test outcomes, and the skips counted by reason (the reason up to its first detail).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SWEEPS = ["conformance/suite/test_sweep_ops.py", "conformance/suite/test_sweep_modules.py"]


def _reason(message: str) -> str:
    """The kind of a skip: its message up to the detail in parentheses or after its second colon."""
    return ": ".join(message.split(" (")[0].split(": ")[:2])


def run_variant(impl, variant, profile, folder):
    results = Path(folder) / f"{variant}.json"
    command = [sys.executable, "-m", "pytest", *SWEEPS, f"--impl={impl}", f"--variant={variant}",
               f"--hypothesis-profile=conformance-{profile}", f"--results={results}", "-q", "-p", "no:cacheprovider",
               "-W", "ignore"]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    seconds = time.perf_counter() - start
    records = json.loads(results.read_text())["records"]
    outcomes = collections.Counter(r.get("outcome", r.get("status")) for r in records)
    by_test = collections.Counter((r["nodeid"].split("::")[1].split("[")[0], r.get("outcome", r.get("status")))
                                  for r in records)
    skips = collections.Counter(_reason(r["message"]) for r in records if r.get("outcome", r.get("status")) == "skip")
    return seconds, load, outcomes, by_test, skips


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="torch.utils.checkpoint")
    parser.add_argument("--profile", default="ci", choices=["ci", "dev", "thorough"])
    parser.add_argument("--variant", default="both", choices=["both", "reentrant", "non_reentrant"])
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    variants = ["reentrant", "non_reentrant"] if args.variant == "both" else [args.variant]
    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        for variant in variants:
            seconds, load, outcomes, by_test, skips = run_variant(args.impl, variant, args.profile, folder)
            figures[variant] = {"seconds": round(seconds, 1), "load_before": load, "outcomes": dict(outcomes),
                                "by_test": {f"{t} {o}": n for (t, o), n in sorted(by_test.items())},
                                "skips": dict(skips.most_common())}
            print(f"{args.impl} {variant} (profile {args.profile}): {seconds:.1f} s wall, load average "
                  f"{load:.2f} before on {os.cpu_count()} CPUs; {dict(outcomes)}")
            for (test, outcome), n in sorted(by_test.items()):
                print(f"    {test:55} {outcome:20} {n}")
            for reason, n in skips.most_common():
                print(f"    skip x{n}: {reason}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
