"""Benchmark: the share of the mutant zoo (tests/mutants/) the oracle alone flags (issue 24's measure).

    python benchmarks/oracle_mutants.py [--jobs 2] [--only AREA ...] [--in-scope] [--json out.json]

Mutants are classified by their TARGET_CLAUSES' areas: those whose clauses speak of values, gradients,
RNG streams or state (IN_SCOPE) are the measure; the others (counts of recomputations, memory, the
debug trace, warnings about use_reentrant, selective checkpointing's policies, the determinism check's
errors, GraphExecGroup, distributed ranks) are reported apart. Each mutant is run as a user would run the
oracle alone: ``pytest --impl=tests.mutants.<name> conformance/suite/test_oracle.py`` (the default,
derandomized conformance-ci profile) in a process of its own; it is flagged when a test fails, crashes or
times out, whatever the level of the clause charged, which is reported with the first failure. A failure
that torch's own declared deviations explain (expectations.toml) does not count: a mutant is torch with
one thing broken, and inherits the rest.

The measure is the mutants whose target clauses speak of values, gradients, RNG streams or state (issue
24's words); a mutant whose every target clause speaks of something else is reported apart
(OTHER_CLAUSES, with what each speaks of).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Areas whose clauses speak of counts, memory, messages, policies or processes, never of the program's values.
OTHER_AREAS = {"recompute", "memory", "debug", "warnings", "sac", "determinism", "earlystop", "groups", "distributed"}
# Clauses of the other areas that speak of rejections, warnings, exceptions or counts, not of values,
# gradients, RNG or state.
OTHER_CLAUSES = {
    "api.keywords": "which keywords are accepted",
    "contextfn.reentrant-rejects": "a rejection", "debug.reentrant-rejects": "a rejection",
    "kwargs.reentrant-rejected": "a rejection", "sequential.single-input": "a rejection",
    "sequential.bad-segments": "a rejection", "gradapi.reentrant-rejects-grad": "a rejection",
    "gradapi.reentrant-rejects-backward-inputs": "a rejection", "detached.reentrant-error": "a rejection",
    "exceptions.forward-propagates": "an exception's type", "exceptions.recompute-propagates": "an exception's type",
    "reqgrad.reentrant-warns": "a warning",
    "sequential.segments": "how often each segment runs",
}


def in_scope(mutant) -> bool:
    """Whether one of the mutant's target clauses speaks of values, gradients, RNG or state."""
    return any(c.split(".")[0] not in OTHER_AREAS and c not in OTHER_CLAUSES for c in mutant.TARGET_CLAUSES)


def _explained_by_torch(record, deviations) -> bool:
    return any(d.matches(impl="torch.utils.checkpoint", clauses=record.clauses, variant=record.variant,
                         device=record.device, nodeid=record.nodeid) for d in deviations)


FLAGGING = ("fail", "crash", "timeout")  # statuses: what happened, whatever the clause's level


def run_one(name: str) -> dict:
    import subprocess
    import tempfile

    from conformance.data.expectations import load_deviations
    from conformance.data.results import read_results

    mutant = importlib.import_module(f"tests.mutants.{name}")
    with tempfile.TemporaryDirectory() as temp:
        results = Path(temp) / "results.json"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--impl=tests.mutants.{name}",
                        f"--results={results}", "conformance/suite/test_oracle.py"],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
        records = read_results(results).records if results.exists() else []
    deviations = load_deviations()
    failed = [r for r in records if r.status in FLAGGING and not _explained_by_torch(r, deviations)]
    if failed:
        first = {"test": failed[0].nodeid.split("::")[-1], "clause": ", ".join(failed[0].clauses),
                 "difference": failed[0].message.replace("\n", " ")[:300]}
    elif not records:  # pytest died before writing any result: the mutant crashed the run
        first = {"test": "-", "clause": "crash", "difference": "pytest wrote no results"}
    else:
        first = None
    return {"mutant": name, "targets": mutant.TARGET_CLAUSES, "breaks": mutant.BREAKS,
            "in_scope": in_scope(mutant), "flagged": first is not None, "first": first}


def main():
    from tests.mutants import mutant_names

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", nargs="*", default=None, help="areas to run (default: all)")
    parser.add_argument("--in-scope", action="store_true", help="only the mutants of the measure (IN_SCOPE areas)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    names = [n for n in mutant_names() if (args.only is None or n.split(".")[0] in args.only)
             and (not args.in_scope or in_scope(importlib.import_module(f"tests.mutants.{n}")))]
    started = time.time()
    results = []
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        for result in pool.map(run_one, names):  # in order, printed as they come (a long run can be read midway)
            results.append(result)
            first = result["first"]
            print(f"{result['mutant']}: {'flagged by ' + first['clause'] if first else 'missed'}", flush=True)
    for scope in (True, False):
        chosen = [r for r in results if r["in_scope"] == scope]
        flagged = [r for r in chosen if r["flagged"]]
        label = "values, gradients, RNG or state" if scope else "other areas"
        share = f"{len(flagged)}/{len(chosen)} = {100 * len(flagged) / len(chosen):.0f}%" if chosen else "none"
        print(f"\n{label}: flagged {share}")
        for r in chosen:
            mark = f"flagged ({r['first']['clause']}: {r['first']['difference'][:120]})" if r["flagged"] else "MISSED"
            print(f"  {r['mutant']}: {mark}")
    print(f"\n{time.time() - started:.0f} s, {args.jobs} jobs")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
