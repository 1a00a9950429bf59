"""Mutation score of the suite (issue 36): mutmut over reference_impl/ and a copy of the installed torch's checkpoint.py.

    tox -e mutation                              # 300 mutants per target, seed 0
    tox -e mutation -- --sample 20               # a quick look (minutes)
    python benchmarks/mutation.py --target torch --sample 300 --seed 0 --shard 1/4

mutmut (pinned in tox.ini) does the work: it writes every mutant of a target as a trampoline, runs the test
selection once to learn which tests reach which function, then runs each mutant in a fork of one warm process
against only those tests, stopping at the first failure, with a timeout from those tests' clean durations.
This driver only lays out each target's work folder (reports/mutation/<target>/), asks mutmut to generate the
mutants, picks a fixed-seed random sample of them (the whole set where it is smaller), keeps this shard's share,
asks mutmut to run those, and prints the figures: killed, survived, timeouts, and the kill rate with its 95%
Wilson interval, over the sampled mutants that are neither equivalent nor unreachable here
(benchmarks/mutation_triage.toml says which, and why).

The torch target is the installed torch's torch/utils/checkpoint.py copied at run time (never committed) to
mutation_target/torch_checkpoint.py in the work folder and bound with --impl; it declares
CONFORMANCE_ID = "torch.utils.checkpoint" so that torch's declared deviations (expectations.toml) apply to it as
to torch. Its `@torch._disable_dynamo` decorators are dropped from the copy: mutmut leaves decorated functions
unmutated, and the decorator only steers torch.compile, which this eager CPU selection never runs.
"""

from __future__ import annotations

import argparse
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
WORK = ROOT / "reports" / "mutation"
TRIAGE = ROOT / "benchmarks" / "mutation_triage.toml"
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
        source + '\n\nCONFORMANCE_ID = "torch.utils.checkpoint"  # pragma: no mutate\n')
    return "mutation_target"


TARGETS = {  # name: (--impl module, how its work folder gets the source to mutate)
    "reference_impl": ("reference_impl", prepare_reference_impl),
    "torch": ("mutation_target.torch_checkpoint", prepare_torch),
}


def prepare(target: str) -> Path:
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
    return work


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


def sample(names: list[str], size: int, seed: int, shard: tuple[int, int]) -> list[str]:
    chosen = sorted(random.Random(seed).sample(names, min(size, len(names))))
    index, count = shard
    return chosen[index - 1::count]


def wilson(killed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (it stays inside [0, 1] and behaves near 100%)."""
    if not n:
        return 0.0, 1.0
    p = killed / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def triaged(target: str) -> dict[str, dict]:
    entries = tomllib.loads(TRIAGE.read_text()).get("survivor", []) if TRIAGE.exists() else []
    return {e["mutant"]: e for e in entries if e["target"] == target}


def summarize(target: str, chosen: list[str], status: dict[str, str], total: int, seconds: float) -> None:
    verdicts = triaged(target)
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
    print(f"{target}: {len(chosen)} mutants sampled of {total}: killed {killed}, timeouts {timeouts}, "
          f"survived {counts.get('survived', 0)}, equivalent {counts.get('equivalent', 0)}, unreachable here "
          f"{counts.get('unreachable-here', 0)}{others}; kill rate {rate} of {scored} scored "
          f"(95% Wilson interval {low:.1%} to {high:.1%}); {seconds:.0f} s")
    untriaged = [n for n in chosen if status[n] != "killed" and status[n] not in KILLED | {"timeout"}
                 and n not in verdicts]
    for name in untriaged:
        print(f"    untriaged {status[name]}: {name}  (mutmut show {name}, in {WORK / target})")


def run_target(target: str, size: int, seed: int, shard: tuple[int, int], max_children: int) -> None:
    start = time.monotonic()
    work = prepare(target)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-c", GENERATE], cwd=work, env=env, check=True)
    (work / "mutants" / "suite").symlink_to(SUITE, target_is_directory=True)
    names = mutant_names(work)
    chosen = sample(names, size, seed, shard)
    mutmut = [sys.executable, "-c", "from mutmut.__main__ import cli; cli()"]
    subprocess.run([*mutmut, "run", f"--max-children={max_children}", *chosen], cwd=work, env=env, check=True)
    summarize(target, chosen, statuses(work), len(names), time.monotonic() - start)


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
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2, help="mutants run at once")
    args = parser.parse_args(argv)
    start = time.monotonic()
    for target in args.target or list(TARGETS):
        run_target(target, args.sample, args.seed, args.shard, args.max_children)
    print(f"mutation: {time.monotonic() - start:.0f} s in all")


if __name__ == "__main__":
    main()
