"""Every clause test can fail: each mutant in tests/mutants is flagged by the clause it violates,
and every clause is targeted by at least one mutant."""

import importlib
from collections import defaultdict

import pytest

from conformance.data import facts
from conformance.data.facts import clause_ids_of
from conformance.data.registry import load_clauses
from conformance.data.results import read_results
from conformance.data.vocabulary import VIOLATIONS
from tests.mutants import mutant_names

# Clauses no mutant can violate on this kind of machine, with the reason. Keep it short.
UNMUTATED = {
    "rng.device-states": "needs a CUDA device to observe; its mutant runs where CUDA is present",
    "memory.peak-below-uncheckpointed": "measured with CUDA allocator statistics; saves_all_activations "
    "targets it where CUDA is present",
    "inputs.changed-between-passes": "OBSERVED, a difference torch shows that the oracle allows (its `relaxes`): "
    "there is no behaviour to break, only one the oracle must not flag",
    "contextfn.reentrant-default-device-ignored": "OBSERVED, a difference torch shows that the oracle allows (its "
    "`relaxes`): there is no behaviour to break, only one the oracle must not flag",
    "retain.reentrant-frees-outer-graph": "OBSERVED, a difference torch shows that the oracle allows (its `relaxes`): "
    "there is no behaviour to break, only one the oracle must not flag",
    "outputs.reentrant-requires-grad-from-any-input": "OBSERVED, a difference torch shows that the oracle allows "
    "(its `relaxes`): there is no behaviour to break, only one the oracle must not flag",
    "recompute.forward-hooks-rerun": "OBSERVED, a difference torch shows that the oracle allows (its `relaxes`): "
    "there is no behaviour to break, only one the oracle must not flag",
}


class _FilesByClause:
    """A pytest plugin object: after collection, which suite files hold each clause's tests."""

    def __init__(self):
        self.files = defaultdict(set)

    def pytest_collection_modifyitems(self, items):
        for item in items:
            for cid in clause_ids_of(item):
                self.files[cid].add(str(item.path))


@pytest.fixture(scope="session")
def files_by_clause():
    """Collected once, so each mutant run imports and collects only the files it needs."""
    collector = _FilesByClause()
    args = ["--collect-only", "-q", "-p", "no:cacheprovider", "--impl=torch.utils.checkpoint", "--device=all", "conformance/suite"]
    assert pytest.main(args, plugins=[collector]) == 0, "the conformance suite does not collect cleanly"
    return collector.files


class _StopOnceFlagged:
    """A pytest plugin object: ends a mutant's run once each target clause has a failing test, so
    the long sweeps (test_sweep_*.py) and the models area (test_models.py), run last, only run for
    mutants the hand-made tests miss."""

    def __init__(self, clauses):
        self.pending, self.session = set(clauses), None

    def pytest_sessionstart(self, session):
        self.session = session

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.failed:
            self.pending -= set(facts.read(report).clauses if facts.read(report) else ())
            if not self.pending:
                self.session.shouldstop = "every target clause is flagged"


def _sweeps_last(path):
    return ("test_sweep_" in path or "test_models" in path, path)


def run_suite(tmp_path, impl, clauses, files):
    """Run the conformance suite in-process against impl, restricted to clauses; return its records."""
    results = tmp_path / "results.json"
    args = [f"--impl={impl}", f"--results={results}", "-q", "-p", "no:cacheprovider", "--timeout=120",
            *sorted(files, key=_sweeps_last)] + [f"--clause={c}" for c in clauses]
    pytest.main(args, plugins=[_StopOnceFlagged(clauses)])
    return read_results(results).records


@pytest.mark.parametrize("name", mutant_names())
def test_mutant_is_flagged_by_its_target_clause(name, tmp_path, files_by_clause):
    mutant = importlib.import_module(f"tests.mutants.{name}")
    targets = mutant.TARGET_CLAUSES
    assert targets and set(targets) <= set(load_clauses()), f"{name}: TARGET_CLAUSES must name known clauses"
    records = run_suite(tmp_path, f"tests.mutants.{name}", targets, {f for c in targets for f in files_by_clause[c]})
    flagged = {c for r in records if r.verdict in VIOLATIONS for c in r.clauses}  # of any level: "fail", "should", "differs"
    unflagged = [c for c in targets if c not in flagged]
    skips = {r.message for r in records if r.status == "skip" and set(r.clauses) & set(unflagged)}
    if unflagged and all(r.status == "skip" for r in records if set(r.clauses) & set(unflagged)) and skips:
        pytest.skip(f"{name}: {unflagged} cannot be observed here ({'; '.join(sorted(skips))})")
    assert not unflagged, f"mutant {name} ({mutant.BREAKS}) is not flagged by {unflagged}"


def test_every_clause_is_targeted_by_a_mutant():
    targeted = {c for name in mutant_names() for c in importlib.import_module(f"tests.mutants.{name}").TARGET_CLAUSES}
    untargeted = [c for c in load_clauses() if c not in targeted and c not in UNMUTATED]
    assert not untargeted, f"clauses no mutant shows the suite can flag: {untargeted}"
