"""benchmarks/mutation.py's own arithmetic: the sample and its shards, the ledger that carries a score across
sessions, and the figures it prints (mutmut itself is not run here: that is `tox -e mutation`)."""

import importlib.util
import json
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location("mutation_driver", Path(__file__).parents[2] / "benchmarks" / "mutation.py")
mutation = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(mutation)

NAMES = [f"pkg.x_f__mutmut_{i}" for i in range(50)]


def test_the_shards_of_a_sample_partition_it_and_the_sample_is_fixed_by_its_seed():
    chosen = mutation.sample(NAMES, 20, seed=0)
    assert chosen == mutation.sample(NAMES, 20, seed=0) != mutation.sample(NAMES, 20, seed=1)
    shares = [mutation.share(chosen, (i, 3)) for i in (1, 2, 3)]
    assert sorted(sum(shares, [])) == chosen
    assert mutation.sample(NAMES[:5], 20, seed=0) == sorted(NAMES[:5])  # the whole set where it is smaller


def test_the_ledger_keeps_what_earlier_shards_measured_and_forgets_another_source(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(mutation, "LEDGERS", tmp_path)
    mutation.write_ledger("t", "abc", {"m1": {"status": "killed"}})
    assert mutation.read_ledger("t", "abc") == {"m1": {"status": "killed"}}
    assert json.loads((tmp_path / "t.json").read_text())["source"] == "abc"
    assert mutation.read_ledger("t", "other") == {}
    assert "another source" in capsys.readouterr().out


def test_the_figures_cover_the_whole_sample_and_say_what_is_pending(monkeypatch, capsys):
    monkeypatch.setattr(mutation, "triaged", lambda target: {"m3": {"verdict": "equivalent"}})
    status = {"m1": "killed", "m2": "survived", "m3": "survived", "m4": "timeout"}
    mutation.summarize("t", ["m1", "m2", "m3", "m4", "m5"], status, total=99, seconds=1)
    line, untriaged = capsys.readouterr().out.splitlines()
    assert "5 mutants sampled of 99, 4 measured (1 pending" in line
    assert "killed 1, timeouts 1, survived 1, equivalent 1" in line
    assert "kill rate 66.7% of 3 scored" in line
    assert "untriaged survived: m2" in untriaged


def test_the_wilson_interval_holds_the_rate_and_stays_in_bounds():
    low, high = mutation.wilson(285, 300)
    assert 0.9 < low < 285 / 300 < high < 1
    assert mutation.wilson(10, 10)[1] == 1.0


def test_every_committed_triage_entry_has_what_its_verdict_needs():
    for target in mutation.TARGETS:
        for name, entry in mutation.triaged(target).items():
            assert entry["target"] == target and entry["reason" if entry["verdict"] != "killed-by" else "test"], name


def test_a_triage_entry_without_its_reason_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(mutation, "TRIAGE", tmp_path / "triage.toml")
    mutation.TRIAGE.write_text('[[survivor]]\ntarget = "t"\nmutant = "m"\nchange = "c"\nverdict = "equivalent"\n')
    with pytest.raises(ValueError, match="m: a verdict"):
        mutation.triaged("t")
    mutation.TRIAGE.write_text('[reasons]\nwording = "only words"\n[[survivor]]\ntarget = "t"\nmutant = "m"\n'
                               'change = "c"\nverdict = "equivalent"\nreason = "wording"\n')
    assert mutation.triaged("t")["m"]["reason"] == "only words"
