"""Every clause test can fail: each mutant in tests/mutants is flagged by the clause it violates,
and every clause is targeted by at least one mutant."""

import importlib

import pytest

from conformance.registry import load_clauses
from conformance.results import read_results
from tests.mutants import mutant_names

# Clauses no mutant can violate on this kind of machine, with the reason. Keep it short.
UNMUTATED = {
    "rng.device-states": "needs a CUDA device to observe; its mutant runs where CUDA is present",
    "memory.peak-below-uncheckpointed": "measured with CUDA allocator statistics; saves_all_activations "
    "targets it where CUDA is present",
}


def run_suite(tmp_path, impl, clauses, *extra):
    """Run the conformance suite in-process against impl, restricted to clauses; return its records."""
    results = tmp_path / "results.json"
    args = [f"--impl={impl}", f"--results={results}", "-q", "-p", "no:cacheprovider", "--timeout=120",
            "conformance/suite", *extra] + [f"--clause={c}" for c in clauses]
    pytest.main(args)
    return read_results(results).records


@pytest.mark.parametrize("name", mutant_names())
def test_mutant_is_flagged_by_its_target_clause(name, tmp_path):
    mutant = importlib.import_module(f"tests.mutants.{name}")
    targets = mutant.TARGET_CLAUSES
    assert targets and set(targets) <= set(load_clauses()), f"{name}: TARGET_CLAUSES must name known clauses"
    records = run_suite(tmp_path, f"tests.mutants.{name}", targets)
    flagged = {c for r in records if r.outcome == "fail" for c in r.clauses}
    unflagged = [c for c in targets if c not in flagged]
    assert not unflagged, f"mutant {name} ({mutant.BREAKS}) is not flagged by {unflagged}"


def test_every_clause_is_targeted_by_a_mutant():
    targeted = {c for name in mutant_names() for c in importlib.import_module(f"tests.mutants.{name}").TARGET_CLAUSES}
    untargeted = [c for c in load_clauses() if c not in targeted and c not in UNMUTATED]
    assert not untargeted, f"clauses no mutant shows the suite can flag: {untargeted}"
