"""Benchmark: the share of the mutant zoo (tests/mutants/) the oracle alone flags (issue 24's measure).

    python benchmarks/oracle_mutants.py [--jobs 2] [--only AREA ...] [--json out.json]

Mutants are classified by their TARGET_CLAUSES' areas: those whose clauses speak of values, gradients,
RNG streams or state (IN_SCOPE) are the measure; the others (counts of recomputations, memory, the
debug trace, warnings about use_reentrant, selective checkpointing's policies, the determinism check's
errors, GraphExecGroup, distributed ranks) are run too and reported apart. Each mutant is run through
the oracle's programs (conformance/suite/test_oracle.py's PROGRAMS, each variant, the conformance-ci
profile's example count, derandomized), in-process and without shrinking: it is flagged at the first
program with a difference no clause allows, whatever its level, and the charged clause is reported.
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

IN_SCOPE = {"api", "rng", "reqgrad", "nested", "detached", "gradapi", "sequential", "nontensor", "outputs", "retain",
            "gradmode", "callers", "autocast", "inputs", "exceptions", "nesting", "kwargs", "contextfn", "modulestate"}


def areas_of(mutant) -> set[str]:
    return {c.split(".")[0] for c in mutant.TARGET_CLAUSES}


def run_one(name: str) -> dict:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    from conformance import oracle
    from conformance.binding import load_implementation
    from conformance.hypothesis_profiles import PROFILES
    from conformance.suite.test_oracle import PROGRAMS

    impl = load_implementation(f"tests.mutants.{name}")
    mutant = importlib.import_module(f"tests.mutants.{name}")
    found = []
    examples = PROFILES["conformance-ci"]["max_examples"]
    for variant in sorted(impl.capabilities.variants):
        for kind, make in PROGRAMS.items():
            if found:
                break

            @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                      phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))
            @given(program=make(variant, impl.capabilities))
            def probe(program):
                try:
                    violations = oracle.violations(program, impl.module)
                except Exception as exc:  # noqa: BLE001  (a crash of the mutant outside any step counts too)
                    found.append({"kind": kind, "variant": variant, "clause": "crash", "difference": repr(exc)[:200]})
                    raise
                if violations:
                    v = violations[0]
                    found.append({"kind": kind, "variant": variant, "clause": v.clause, "difference": str(v.difference)[:300],
                                  "program": repr(program)})
                    raise AssertionError("flagged")

            try:
                probe()
            except Exception:  # noqa: BLE001  (flagged: recorded in found)
                pass
    return {"mutant": name, "targets": mutant.TARGET_CLAUSES, "breaks": mutant.BREAKS,
            "in_scope": bool(areas_of(mutant) & IN_SCOPE), "flagged": bool(found), "first": found[0] if found else None}


def main():
    from tests.mutants import mutant_names

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", nargs="*", default=None, help="areas to run (default: all)")
    parser.add_argument("--in-scope", action="store_true", help="only the mutants of the measure (IN_SCOPE areas)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    names = [n for n in mutant_names() if (args.only is None or n.split(".")[0] in args.only)
             and (not args.in_scope or areas_of(importlib.import_module(f"tests.mutants.{n}")) & IN_SCOPE)]
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
