"""Benchmark: torch's own checkpoint tests as a floor (issue 44): which of them fail on each mutant.

    python benchmarks/upstream_floor.py --upstream DIR [MUTANT ...] [--jobs 2] [--json out.json]

DIR is pytorch/pytorch's ``test/`` folder (or any folder holding its ``test_utils.py`` and ``test_autograd.py``;
docs/UPSTREAM_TESTS.md names the commits read). The project ships none of torch's test code: bring a checkout.
Its checkpoint tests (the keyword selection below) run once against torch, as the baseline, and once against each
implementation, which replaces torch's checkpoint in ``torch.utils.checkpoint`` before the test files import it.
An upstream test *kills* an implementation when it passes on torch and fails, errs or times out on it.

Without MUTANT names it checks the floor: every mutant that declares ``UPSTREAM_TESTS`` (tests/mutants/__init__.py)
is killed by each test it names; ``--all`` runs every mutant and prints which upstream tests kill it (a survey).
Whether the conformance suite kills the same mutants is tests/zoo/test_mutants.py's job, in CI.
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
# torch's checkpoint tests: the classes named after checkpointing, the tests of TestAutograd (and its device
# variant) whose names say it, and the two checkpoint tests whose names do not.
SELECTION = ("checkpoint or Checkpoint or test_access_saved_tensor_twice_without_recomputation_works"
             " or test_custom_autograd_ac_early_stop")
FILES = ("test_utils.py", "test_autograd.py")
PER_TEST_TIMEOUT = 300
IMPL_VARIABLE = "CONFORMANCE_UPSTREAM_IMPL"  # (child) the implementation's module; with _OUT: where outcomes go

# ----------------------------------------------------- the child: a pytest plugin (-p benchmarks.upstream_floor)
_OUTCOMES: dict[str, set[str]] = {}  # nodeid -> the outcomes of its phases


def pytest_configure(config):
    """(In the child's pytest, loaded with -p) put the implementation in torch.utils.checkpoint's place."""
    import importlib

    import torch.utils.checkpoint as torch_checkpoint

    impl = importlib.import_module(os.environ[IMPL_VARIABLE])
    for name in torch_checkpoint.__all__:  # torch's public checkpoint API, each name the implementation provides
        if hasattr(impl, name):
            setattr(torch_checkpoint, name, getattr(impl, name))


def pytest_runtest_logreport(report):
    """(In the child) one outcome per test: failed if any phase failed, else skipped or passed."""
    outcomes = _OUTCOMES.setdefault(report.nodeid, set())
    outcomes.add("failed" if report.failed else report.outcome)


def pytest_sessionfinish(session):
    out = os.environ.get(IMPL_VARIABLE + "_OUT")
    if out:
        ranked = {nodeid: next(o for o in ("failed", "skipped", "passed") if o in seen) for nodeid, seen in _OUTCOMES.items()}
        Path(out).write_text(json.dumps(ranked, indent=0, sort_keys=True))


# ------------------------------------------------------------------------------------------- the driver


def run(impl: str, upstream: Path, slow: bool = True, tests: list[str] | None = None) -> tuple[dict[str, str], str]:
    """torch's checkpoint tests (or only the given ones) against impl, in a process of their own: {nodeid: outcome},
    and how it ended."""
    with tempfile.TemporaryDirectory() as temp:
        out = Path(temp) / "outcomes.json"
        env = {**os.environ, IMPL_VARIABLE: impl, IMPL_VARIABLE + "_OUT": str(out), "PYTORCH_TEST_WITH_SLOW": "1" if slow else "0",
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), "OMP_NUM_THREADS": "1"}
        command = [sys.executable, "-m", "pytest", "-p", "benchmarks.upstream_floor", "-p", "no:cacheprovider", "-q",
                   f"--timeout={PER_TEST_TIMEOUT}", "--rootdir", str(upstream),
                   *([f"{upstream}/{t}" for t in tests] if tests else ["-k", SELECTION, *[str(upstream / f) for f in FILES]])]
        done = subprocess.run(command, cwd=upstream, env=env, capture_output=True, text=True, check=False)
        outcomes = json.loads(out.read_text()) if out.exists() else {}
        ended = "" if outcomes else f"no outcomes (exit {done.returncode}): {(done.stdout + done.stderr)[-800:]}"
        return outcomes, ended


def kills(baseline: dict[str, str], outcomes: dict[str, str], tests: list[str] | None = None) -> list[str]:
    """Of the upstream tests run (all, or the given ones), those that pass on torch and fail on the implementation (a
    test the run never reached fails too: the run died before it)."""
    return sorted(t for t, o in baseline.items() if o == "passed" and (tests is None or t in tests)
                  and outcomes.get(t, "failed") == "failed")


def _module(name: str) -> str:
    return name if name.startswith("tests.") else f"tests.mutants.{name}"


def main():
    from tests.mutants import mutant_names, upstream_floor

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mutants", nargs="*", help="mutants (<area>.<name> of tests/mutants, or a module such as tests.heldout.<name>)")
    parser.add_argument("--upstream", type=Path, required=True, help="pytorch/pytorch's test/ folder")
    parser.add_argument("--all", action="store_true", help="every mutant, not only those declaring UPSTREAM_TESTS")
    parser.add_argument("--no-slow", action="store_true", help="leave out torch's @slowTest tests (a minute a run)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", default=None, help="write {mutant: killing upstream tests} here")
    args = parser.parse_args()
    upstream = args.upstream.resolve()
    floor = upstream_floor()
    names = args.mutants or (mutant_names() if args.all else sorted(floor))
    started = time.time()
    slow = not args.no_slow
    baseline, ended = run(BASELINE, upstream, slow)
    if ended:
        sys.exit(f"the baseline run on torch failed: {ended}")
    passing = sorted(t for t, o in baseline.items() if o == "passed")
    print(f"baseline ({BASELINE}): {len(baseline)} upstream tests, {len(passing)} pass on torch; "
          f"{time.time() - started:.0f} s", flush=True)
    for test, outcome in sorted(baseline.items()):
        if outcome != "passed":
            print(f"  {outcome} on torch: {test}")
    killed_by, broken = {}, []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        selected = {n: None if args.all else floor.get(n) for n in names}
        for name, (outcomes, ended) in zip(names, pool.map(lambda n: run(_module(n), upstream, slow, selected[n]), names)):
            killed_by[name] = kills(baseline, outcomes, selected[name]) if not ended else []
            missing = sorted(set(floor.get(name, ())) - set(killed_by[name]))
            if ended or missing:
                broken.append(name)
            note = f"  DECLARED BUT NOT KILLING: {missing}" if missing else ""
            print(f"{name}: {len(killed_by[name])} killing {killed_by[name][:4]}"
                  f"{' ...' if len(killed_by[name]) > 4 else ''}{note}{'  ' + ended if ended else ''}", flush=True)
    unproven = [t for t in passing if not any(t in tests for tests in floor.values())]
    print(f"\n{len(passing) - len(unproven)} of {len(passing)} upstream tests passing on torch have a floor mutant; "
          f"{len(broken)} declaration(s) broken; {time.time() - started:.0f} s")
    for test in unproven:
        print(f"  no floor mutant: {test}")
    if args.json:
        Path(args.json).write_text(json.dumps({"baseline": baseline, "killed_by": killed_by}, indent=1))
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
