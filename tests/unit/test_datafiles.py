"""The data files are checked at the door (conformance/data/datafiles.py): a misspelt key in any of them fails at load,
naming the file, the entry and the field; the results file's published JSON Schema is the model's and holds for a
real run's file."""

import json
import tomllib
from pathlib import Path

import jsonschema
import pytest

from conformance.data import findings
from conformance.data.datafiles import DataFileError
from conformance.data.expectations import EXPECTATIONS_PATH, Expectations
from conformance.data.registry import CLAUSES_PATH, load_clauses
from conformance.data.results import SCHEMA_PATH, json_schema, read_results
from tests.integration.test_plugin import run_pytest

REPO = Path(__file__).resolve().parents[2]


def _toml(value) -> str:
    """A TOML value: JSON strings, numbers and booleans are TOML's; lists and tables are written inline."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def _misspelt(source: Path, table: str, key: str, target: Path, keep=()) -> Path:
    """``source``'s first [[table]] entry (with its file's [[keep]] tables) written to ``target``, ``key`` misspelt."""
    data = tomllib.loads(source.read_text())
    entry = {(k[:-1] + k[-1] * 2 if k == key else k): v for k, v in data[table][0].items()}
    lines = [line for kept in keep for e in data[kept] for line in (f"[[{kept}]]", *(f"{k} = {_toml(v)}" for k, v in e.items()))]
    lines += [f"[[{table}]]", *(f"{k} = {_toml(v)}" for k, v in entry.items())]
    target.write_text("\n".join(lines) + "\n")
    return target


@pytest.mark.parametrize("table, key, load", [
    ("deviation", "variant", lambda path: Expectations.load(path)),
    ("breakage", "reason", lambda path: Expectations.load(path)),
    ("known_upstream", "summary", lambda path: Expectations.load(path)),
])
def test_a_misspelt_key_of_expectations_fails_naming_file_entry_and_field(tmp_path, table, key, load):
    path = _misspelt(EXPECTATIONS_PATH, table, key, tmp_path / "expectations.toml")
    with pytest.raises(DataFileError, match=rf"expectations.toml: \[\[{table}\]\] #1 \(.+\): .*unknown field '{key}{key[-1]}'"):
        load(path)


def test_a_misspelt_key_of_a_declarations_failure_names_its_field(tmp_path):
    path = tmp_path / "expectations.toml"
    path.write_text('[[deviation]]\nimpl = "mypkg"\nclauses = "api.forward-value"\nreason = "r"\n'
                    'failure = { exception = "ValueError", mesage = "x" }\n')
    with pytest.raises(DataFileError, match=r"\[\[deviation\]\] #1 \(mypkg/api.forward-value\): unknown field 'failure.0.mesage'"):
        Expectations.load(path)


def test_a_misspelt_key_of_the_clause_file_fails_naming_file_entry_and_field(tmp_path):
    path = _misspelt(CLAUSES_PATH, "clause", "note", tmp_path / "clauses.toml", keep=("area",))
    first = next(iter(load_clauses()))
    with pytest.raises(DataFileError, match=rf"clauses.toml: \[\[clause\]\] #1 \({first}\): unknown field 'notee'"):
        load_clauses(path)


def test_a_misspelt_key_of_the_findings_fails_naming_file_entry_and_field(tmp_path):
    source = REPO / "findings" / findings.FINDINGS_PATH.name
    path = _misspelt(source, "finding", "searched", tmp_path / "findings.toml")
    (tmp_path / tomllib.loads(source.read_text())["finding"][0]["script"]).write_text("")
    with pytest.raises(DataFileError, match=r"findings.toml: \[\[finding\]\] #1 \(.+\): .*unknown field 'searchedd'"):
        findings.load_findings(path)


def test_a_misspelt_key_of_a_results_file_fails_naming_file_record_and_field(tmp_path):
    results = tmp_path / "results.json"
    run_pytest("--impl=reference_impl", "--clause=api.forward-value", "--variant=reentrant", "-k", "one-input",
               f"--results={results}", "-q")
    data = json.loads(results.read_text())
    data["records"][0]["clausess"] = data["records"][0].pop("clauses")
    results.write_text(json.dumps(data))
    with pytest.raises(DataFileError, match=r"results.json: .*unknown field 'records.0.clausess'"):
        read_results(results)
    data["records"][0]["clauses"] = data["records"][0].pop("clausess")
    data["header"]["implementaton"] = "x"
    results.write_text(json.dumps(data))
    with pytest.raises(DataFileError, match=r"results.json: .*unknown field 'header.implementaton'"):
        read_results(results)


def test_the_published_results_schema_is_the_models():
    assert json.loads(SCHEMA_PATH.read_text()) == json_schema(), (
        f"{SCHEMA_PATH.name} is not the model's schema: write it again with `python -m conformance schema > {SCHEMA_PATH}`")


def test_a_real_runs_results_file_holds_to_the_published_schema(tmp_path):
    """A run through the runner (its header has the supervisor's account) and one through pytest alone, with failures,
    expected deviations and causes."""
    from conformance.run import Limits, RunSpec, run_all

    run_all([RunSpec("tests.mutants.rng.forgets_rng_state", "reentrant", "cpu")], tmp_path / "run", Limits(test_timeout=60),
            clauses=["rng.same-forward"])
    plain = tmp_path / "plain.json"
    run_pytest("--impl=torch.utils.checkpoint", "--clause=earlystop", f"--results={plain}", "-q")
    schema = json.loads(SCHEMA_PATH.read_text())
    files = [*sorted((tmp_path / "run").glob("*.json")), plain]
    for path in files:
        data = json.loads(path.read_text())
        jsonschema.validate(data, schema)
        read_results(path)
    records = [r for path in files for r in read_results(path).records]
    assert any(r.facts.causes for r in records) and any(r.status == "pass" for r in records)
    assert any("supervisor" in read_results(path).header for path in files)
