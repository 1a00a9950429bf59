"""The oracle's reproducer scripts stand alone: one generated for a mutant fails on it and passes on torch,
run in a fresh interpreter with nothing of the harness importable but the implementation."""

import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st

from conformance import oracle
from conformance.plugin.binding import load_implementation
from conformance.data.capabilities import Capabilities
from conformance.oracle.script import reproducer
from conformance.oracle.strategies import programs

ROOT = Path(__file__).resolve().parents[2]
MUTANT = "tests.mutants.rng.rng_forward_reseeded"  # reseeds the RNG before the forward: dropout masks differ


def _run(script: Path, module: str) -> subprocess.CompletedProcess:
    # -I: isolated (no user site, no cwd on sys.path); the mutant's package is reachable through PYTHONPATH only
    # for the mutant run, so the torch run imports nothing of this checkout.
    env = {"PYTHONPATH": str(ROOT)} if module.startswith("tests.") else {}
    return subprocess.run([sys.executable, str(script), module], capture_output=True, text=True, timeout=120,
                          env={**env, "PATH": "/usr/bin:/bin"}, cwd=script.parent)


def test_a_shrunk_reproducer_fails_on_the_mutant_and_passes_on_torch(tmp_path):
    module = load_implementation(MUTANT).module
    program = find(programs("non_reentrant", Capabilities(features=frozenset({"preserve_rng_state"}))), lambda p: bool(oracle.violations(p, module)),
                   settings=settings(max_examples=200, derandomize=True, database=None, deadline=None,
                                     suppress_health_check=list(HealthCheck)))
    differences = [v.difference for v in oracle.violations(program, module)]
    script = tmp_path / "reproducer.py"
    script.write_text(reproducer(program, MUTANT, differences))
    on_mutant, on_torch = _run(script, MUTANT), _run(script, "torch.utils.checkpoint")
    assert on_mutant.returncode == 1, f"the script does not fail on the mutant:\n{on_mutant.stdout}{on_mutant.stderr}"
    assert "difference" in on_mutant.stdout
    assert on_torch.returncode == 0, f"the script fails on torch:\n{on_torch.stdout}{on_torch.stderr}"


def test_a_reproducer_prints_every_difference_it_lists_values_and_gradients_first(tmp_path):
    """A bug of the RNG replay shows in the gradients: the oracle charges it to the RNG, and the script still
    prints the gradient difference (the observable it showed in), before the RNG stream's."""
    mutant = "tests.mutants.rng.non_reentrant_forces_no_preserve"
    module = load_implementation(mutant).module
    program = find(programs("non_reentrant", Capabilities(features=frozenset({"preserve_rng_state"})), random=st.just(True)),
                   lambda p: {"gradients", "rng"} <= {v.observed.observable for v in oracle.violations(p, module)},
                   settings=settings(max_examples=200, derandomize=True, database=None, deadline=None,
                                     suppress_health_check=list(HealthCheck)))
    found = oracle.violations(program, module)
    assert {v.difference.observable for v in found} == {"rng"}  # charged to the RNG, every one
    script = tmp_path / "reproducer.py"
    script.write_text(reproducer(program, mutant, [v.observed for v in found]))
    printed = _run(script, mutant).stdout.splitlines()
    kinds = [line.split(": ")[1] for line in printed if line.startswith("step ")]
    assert "gradients" in kinds and "rng" in kinds, "\n".join(printed)
    assert kinds.index("gradients") < kinds.index("rng"), "values and gradients come before the process state"
    assert len(kinds) == len(found), f"the script prints {len(kinds)} of the {len(found)} differences it lists"
