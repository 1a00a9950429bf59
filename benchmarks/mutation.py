"""Mutation score of the suite (issue 36): mutmut over reference_impl/ and a copy of the installed torch's checkpoint.py.

    tox -e mutation                              # 300 mutants per target, seed 0
    tox -e mutation -- --sample 20               # a quick look (minutes)
    python benchmarks/mutation.py --target torch --sample 300 --seed 0 --shard 1/4

mutmut (pinned in tox.ini) does the work: it writes every mutant of a target as a trampoline, runs the test
selection once to learn which tests reach which function, then runs each mutant in a fork of one warm process
against only those tests, stopping at the first failure, with a timeout from those tests' clean durations.
This driver only lays out each target's work folder (build/mutation/<target>/), asks mutmut to generate the
mutants, picks a fixed-seed random sample of them (the whole set where it is smaller), keeps this shard's share,
asks mutmut to run those, records their statuses in the target's ledger, and prints the figures of the whole sample
from it: killed, survived, timeouts, and the kill rate with its 95% Wilson interval, over the sampled mutants that
are neither equivalent nor unreachable here (benchmarks/mutation_triage.toml says which, and why).

A 300-mutant sample takes about half an hour per target on this idle 2-core machine, and its survivors' re-measure
as long again, so a score may be measured in shards across sessions:
benchmarks/mutation_ledger/<target>.json (committed) keeps each measured mutant's status with the commit and date
it was measured at, for one digest of the mutated source (a changed source starts a new ledger). Every run
re-measures its own shard; mutants of the sample no run has measured yet are printed as pending.
`--survivors` re-measures only the ledger's survivors and timeouts not triaged as equivalent or unreachable here
(after tests were added to kill them).

The torch target is the installed torch's torch/utils/checkpoint.py copied at run time (never committed) to
mutation_target/torch_checkpoint.py in the work folder and bound with --impl; it declares
__conformance__ = {"id": "torch.utils.checkpoint"} so that torch's declared deviations (expectations.toml) apply to it as
to torch. Its `@torch._disable_dynamo` decorators are dropped from the copy: mutmut leaves decorated functions
unmutated, and the decorator only steers torch.compile, which this eager CPU selection never runs.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "build" / "mutation"  # scratch (git-ignored), not under reports/: the report reads every JSON file there
TRIAGE = ROOT / "benchmarks" / "mutation_triage.toml"
LEDGERS = ROOT / "benchmarks" / "mutation_ledger"
SUITE = ROOT / "conformance" / "suite"

# The fast selection: every area but the sweeps, the models and the two-rank distributed tests (minutes each,
# and they exercise the same code paths as the areas kept), plus the oracle. Any test failing kills a mutant,
# whatever its clause's level (--strict-levels): a mutant is a change of behaviour, documented or observed.
SLOW = {"test_sweep_ops.py", "test_sweep_modules.py", "test_models.py", "test_distributed.py"}
# The suite is linked into mutmut's folder as suite/: pytest names tests relative to its rootdir (that folder), and
# mutmut passes those names back to select a mutant's tests. importlib import mode keeps the checkout off sys.path,
# so that the mutated copy, first on it, is what --impl imports.
TESTS = sorted(f"suite/{p.name}" for p in SUITE.glob("test_*.py") if p.name not in SLOW)
# `-m clause` (every conformance test carries the marker) tells the judge this is not a whole row's run, so it does
# not call a declared deviation stale when the test that shows it sits in an area left out here.
PYTEST_ARGS = ["-c", "pytest.ini", "--import-mode=importlib", "-m", "clause", "--device=cpu", "--strict-levels", "--hypothesis-profile=conformance-ci",
               "-p", "no:cacheprovider"]
PYTEST_INI = "[pytest]\naddopts = -p conformance.plugin\ntimeout = 120\n"

# mutmut's own exit-code vocabulary (mutmut.stats.status_by_exit_code), folded into the figures printed.
KILLED = {"killed", "segfault", "caught by type check"}
UNSETTLED = {"survived", "no tests", "timeout"}  # what --survivors measures again


def prepare_reference_impl(work: Path) -> str:
    shutil.copytree(ROOT / "reference_impl", work / "reference_impl", ignore=shutil.ignore_patterns("__pycache__"))
    return "reference_impl"


def prepare_torch(work: Path) -> str:
    import torch.utils.checkpoint

    source = Path(torch.utils.checkpoint.__file__).read_text()
    source = source.replace("@torch._disable_dynamo\n", "# @torch._disable_dynamo (dropped: see benchmarks/mutation.py)\n")
    package = work / "mutation_target"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "torch_checkpoint.py").write_text(
        source + '\n\n__conformance__ = {"id": "torch.utils.checkpoint"}  # pragma: no mutate\n')
    return "mutation_target"


TARGETS = {  # name: (--impl module, how its work folder gets the source to mutate)
    "reference_impl": ("reference_impl", prepare_reference_impl),
    "torch": ("mutation_target.torch_checkpoint", prepare_torch),
}


def prepare(target: str) -> tuple[Path, str]:
    """A fresh work folder: the source to mutate and mutmut's configuration (its cache kept when the source is unchanged)."""
    impl, copy_source = TARGETS[target]
    work = WORK / target
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    source_dir = copy_source(work)
    (work / "pytest.ini").write_text(PYTEST_INI)
    config = {"source_paths": [source_dir], "also_copy": ["pytest.ini"], "process_isolation": "forkserver",
              "pytest_add_cli_args": [*PYTEST_ARGS, f"--impl={impl}"],
              "pytest_add_cli_args_test_selection": TESTS}
    lines = [f"{key} = {json.dumps(value)}" for key, value in config.items()]
    (work / "pyproject.toml").write_text("[tool.mutmut]\n" + "\n".join(lines) + "\n")
    return work, source_dir


GENERATE = """
from mutmut.__main__ import copy_src_dir, copy_also_copy_files, create_mutants
from mutmut.mutation.trampoline import set_mutant_under_test
set_mutant_under_test("mutant_generation")
copy_src_dir(); copy_also_copy_files(); create_mutants(2)
"""


def mutant_names(work: Path) -> list[str]:
    """Every mutant mutmut generated, from its per-file .meta records."""
    return sorted(name for meta in (work / "mutants").rglob("*.py.meta")
                  for name in json.loads(meta.read_text())["exit_code_by_key"])


def statuses(work: Path) -> dict[str, str]:
    from mutmut.stats import status_by_exit_code

    return {name: status_by_exit_code[code] for meta in (work / "mutants").rglob("*.py.meta")
            for name, code in json.loads(meta.read_text())["exit_code_by_key"].items()}


def sample(names: list[str], size: int, seed: int) -> list[str]:
    return sorted(random.Random(seed).sample(names, min(size, len(names))))


def share(chosen: list[str], shard: tuple[int, int]) -> list[str]:
    index, count = shard
    return chosen[index - 1::count]


def source_digest(work: Path, source_dir: str) -> str:
    """What the mutants are mutants of: the target's source as copied into its work folder (and torch's version)."""
    import torch

    digest = hashlib.sha256(torch.__version__.encode())
    for path in sorted((work / source_dir).rglob("*.py")):
        digest.update(path.relative_to(work).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def read_ledger(target: str, digest: str) -> dict[str, dict]:
    """The statuses measured so far for this source; a ledger of another source is set aside (its names no longer hold)."""
    path = LEDGERS / f"{target}.json"
    ledger = json.loads(path.read_text()) if path.exists() else {}
    if ledger and ledger["source"] != digest:
        print(f"{target}: {path.name} was measured on another source ({ledger['source']}, now {digest}): starting a new ledger")
        return {}
    return ledger.get("mutants", {})


def write_ledger(target: str, digest: str, measured: dict[str, dict]) -> None:
    LEDGERS.mkdir(exist_ok=True)
    body = {"target": target, "source": digest, "mutants": dict(sorted(measured.items()))}
    (LEDGERS / f"{target}.json").write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n")


def measured_now(names: list[str], status: dict[str, str]) -> dict[str, dict]:
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    stamp = {"commit": commit or "unknown", "date": datetime.date.today().isoformat()}
    return {name: {"status": status[name], **stamp} for name in names}


def wilson(killed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (it stays inside [0, 1] and behaves near 100%)."""
    if not n:
        return 0.0, 1.0
    p = killed / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


VERDICTS = {"killed-by": "test", "equivalent": "reason", "unreachable-here": "reason", "gap": "reason"}


def triaged(target: str) -> dict[str, dict]:
    """The triage file's survivors of one target; a reason may name one of its shared [reasons]."""
    triage = tomllib.loads(TRIAGE.read_text()) if TRIAGE.exists() else {}
    shared = triage.get("reasons", {})
    entries = {}
    for entry in triage.get("survivor", []):
        needs = VERDICTS.get(entry.get("verdict"))
        if needs is None or not entry.get(needs) or not entry.get("change"):
            raise ValueError(f"{TRIAGE.name}: {entry.get('mutant')}: a verdict among {sorted(VERDICTS)}, "
                             f"its change and, for that verdict, its {needs or 'reason or test'}")
        if entry["target"] == target:
            if entry["mutant"] in entries:
                raise ValueError(f"{TRIAGE.name}: {entry['mutant']} is triaged twice")
            entries[entry["mutant"]] = {**entry, "reason": shared.get(entry.get("reason"), entry.get("reason"))}
    return entries


def summarize(target: str, chosen: list[str], status: dict[str, str], total: int, seconds: float) -> None:
    """The figures of the whole sample: `status` holds what the ledger and this run measured; the rest is pending."""
    verdicts = triaged(target)
    pending = [name for name in chosen if name not in status]
    chosen = [name for name in chosen if name in status]
    counts: dict[str, int] = {}
    for name in chosen:
        key = status[name]
        if key in ("survived", "no tests") and verdicts.get(name, {}).get("verdict") in ("equivalent", "unreachable-here"):
            key = verdicts[name]["verdict"]  # a gap or a killed-by not yet seen killed still counts as survived
        counts[key] = counts.get(key, 0) + 1
    killed = sum(counts.pop(k, 0) for k in KILLED)
    timeouts = counts.pop("timeout", 0)  # a mutant that hangs the tests is caught: mutmut counts it killed too
    excluded = counts.get("equivalent", 0) + counts.get("unreachable-here", 0)
    scored = len(chosen) - excluded
    low, high = wilson(killed + timeouts, scored)
    rate = f"{(killed + timeouts) / scored:.1%}" if scored else "n/a"
    others = "".join(f", {k} {v}" for k, v in sorted(counts.items()) if k not in ("survived", "equivalent", "unreachable-here"))
    print(f"{target}: {len(chosen) + len(pending)} mutants sampled of {total}, {len(chosen)} measured"
          f"{f' ({len(pending)} pending: no run has measured them yet)' if pending else ''}: killed {killed}, timeouts {timeouts}, "
          f"survived {counts.get('survived', 0)}, equivalent {counts.get('equivalent', 0)}, unreachable here "
          f"{counts.get('unreachable-here', 0)}{others}; kill rate {rate} of {scored} scored "
          f"(95% Wilson interval {low:.1%} to {high:.1%}); {seconds:.0f} s")
    untriaged = [n for n in chosen if status[n] != "killed" and status[n] not in KILLED | {"timeout"}
                 and n not in verdicts]
    for name in untriaged:
        print(f"    untriaged {status[name]}: {name}  (mutmut show {name}, in {WORK / target})")


def run_target(target: str, size: int, seed: int, shard: tuple[int, int], max_children: int, survivors: bool) -> None:
    start = time.monotonic()
    work, source_dir = prepare(target)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-c", GENERATE], cwd=work, env=env, check=True)
    (work / "mutants" / "suite").symlink_to(SUITE, target_is_directory=True)
    names = mutant_names(work)
    chosen = sample(names, size, seed)
    digest = source_digest(work, source_dir)
    ledger = read_ledger(target, digest)
    if survivors:  # those a new test may kill: not the ones triaged as equivalent or unreachable here
        settled = {name for name, entry in triaged(target).items() if entry["verdict"] in ("equivalent", "unreachable-here")}
        run = [name for name in chosen if ledger.get(name, {}).get("status") in UNSETTLED and name not in settled]
    else:
        run = share(chosen, shard)
    if run:
        mutmut = [sys.executable, "-c", "from mutmut.__main__ import cli; cli()"]
        subprocess.run([*mutmut, "run", f"--max-children={max_children}", *run], cwd=work, env=env, check=True)
        # mutmut's timeout is wall-clock: a loaded machine times out mutants whose tests finish in seconds (110 of
        # 300 once; measured again, every one was killed or survived). A timeout counts only if it times out again, run alone.
        timeouts = [name for name in run if statuses(work)[name] == "timeout"]
        if timeouts:
            print(f"{target}: measuring the {len(timeouts)} timeouts again, one at a time")
            subprocess.run([*mutmut, "run", "--max-children=1", *timeouts], cwd=work, env=env, check=True)
        ledger.update(measured_now(run, statuses(work)))
        write_ledger(target, digest, ledger)
    status = {name: entry["status"] for name, entry in ledger.items()}
    summarize(target, chosen, status, len(names), time.monotonic() - start)


def parse_shard(text: str) -> tuple[int, int]:
    index, count = (int(part) for part in text.split("/"))
    if not 1 <= index <= count:
        raise argparse.ArgumentTypeError(f"--shard {text}: want I/N with 1 <= I <= N")
    return index, count


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", choices=TARGETS, action="append", help="repeatable (default: both)")
    parser.add_argument("--sample", type=int, default=300, help="mutants per target, drawn with --seed (default 300)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shard", type=parse_shard, default=(1, 1), metavar="I/N",
                        help="run the I-th of N equal shares of the sample (default 1/1)")
    parser.add_argument("--survivors", action="store_true",
                        help="re-measure only the sample's survivors and timeouts in the ledger that are not triaged as "
                             "equivalent or unreachable here (after adding the tests that kill them)")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2, help="mutants run at once")
    args = parser.parse_args(argv)
    start = time.monotonic()
    for target in args.target or list(TARGETS):
        run_target(target, args.sample, args.seed, args.shard, args.max_children, args.survivors)
    print(f"mutation: {time.monotonic() - start:.0f} s in all")


if __name__ == "__main__":
    main()
