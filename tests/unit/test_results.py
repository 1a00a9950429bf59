"""Results schema 3: status, expectation and level kept apart, verdicts derived, judging again without re-running."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.data.causes import Cause
from conformance.data.expectations import load_deviations, rejudge
from conformance.data.results import Expected, Facts, Record, Results, read_results, write_results
from conformance.data.vocabulary import SEVERITY, STATUSES, VERDICTS, verdict

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("status, expected, wanted", [
    ("pass", None, "pass"), ("fail", None, "fail"),
    ("fail", "deviation", "expected_deviation"), ("pass", "deviation", "fixed_deviation"),
    ("fail", "unsupported", "unsupported"), ("pass", "unsupported", "unclaimed_pass"),
    ("crash", "deviation", "crash"), ("timeout", None, "timeout"), ("skip", "unsupported", "skip"),
    ("not_run", None, "not_run"), ("error", "deviation", "error"),
])
def test_a_verdict_derives_from_status_and_expectation(status, expected, wanted):
    assert verdict(status, expected) == wanted


def test_every_status_is_a_verdict_and_every_verdict_has_a_look():
    assert set(STATUSES) <= set(SEVERITY)
    assert all(v.symbol and v.label and v.meaning for v in VERDICTS.values())


BOOM = (Cause("exception", "RuntimeError", "boom"),)  # what the recorded failures below look like


def _results(impl, records, capabilities=None):
    header = {"implementation": impl}
    if capabilities is not None:
        header["capabilities"] = capabilities
    return Results(header=header, records=records)


def _expectations(tmp_path, text):
    path = tmp_path / "expectations.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_results_are_judged_again_against_edited_expectations(tmp_path):
    failing = Record("t.py::test_a[reentrant]", Facts(["api.forward-value"], "reentrant", "cpu", expected=Expected("deviation", "old reason"),
                                                      causes=BOOM), "fail", "boom")
    passing = Record("t.py::test_b[reentrant]", Facts(["api.same-gradients"], "reentrant", "cpu"), "pass")
    results = _results("mypkg", [failing, passing])
    path = _expectations(tmp_path, """
        [[deviation]]
        impl = "mypkg"
        clauses = "api.same-gradients"
        test = "test_b"
        failure = { exception = "RuntimeError", message = "boom" }
        reason = "declared, but it passes now"
    """)
    judged = rejudge(results, load_deviations(path))
    assert [(r.status, r.verdict) for r in judged.records] == [("fail", "fail"), ("pass", "fixed_deviation")]
    assert judged.records[1].expected.reason == "declared, but it passes now"


def test_a_deviation_with_several_test_substrings_covers_the_tests_matching_any(tmp_path):
    records = [Record(f"t.py::test_kind[reentrant-{kind}]", Facts(["api.forward-value"], "reentrant", "cpu", causes=BOOM), "fail")
               for kind in ("None", "int", "str")]
    path = _expectations(tmp_path, """
        [[deviation]]
        impl = "mypkg"
        clauses = "api.forward-value"
        test = ["-int]", "-str]"]
        failure = { exception = "RuntimeError" }
        reason = "only some kinds"
    """)
    judged = rejudge(_results("mypkg", records), load_deviations(path))
    assert [r.verdict for r in judged.records] == ["fail", "expected_deviation", "expected_deviation"]


def test_rejudging_keeps_the_recorded_capabilities(tmp_path):
    caps = {"source": "inferred", "declared": [], "variants": ["non_reentrant", "reentrant"], "devices": ["cpu", "cuda"],
            "features": [], "not_provided": {"early_stop": "set_checkpoint_early_stop"}}
    record = Record("t.py::test_c[non_reentrant]", Facts(["earlystop.context-manager-overrides"], "non_reentrant", "cpu"), "fail")
    judged = rejudge(_results("mypkg", [record], caps), [])
    assert judged.records[0].verdict == "unsupported"
    assert "not provided: set_checkpoint_early_stop" in judged.records[0].expected.reason


def test_report_command_rejudges_without_rerunning(tmp_path):
    write_results(tmp_path / "in" / "r.json", _results("mypkg", [
        Record("t.py::test_a[reentrant]", Facts(["api.forward-value"], "reentrant", "cpu", causes=BOOM), "fail", "boom")]))
    path = _expectations(tmp_path, """
        [[deviation]]
        impl = "mypkg"
        clauses = "api.forward-value"
        failure = { exception = "RuntimeError", message = "boom" }
        reason = "KNOWN-ROUNDING-REASON"
    """)
    command = [sys.executable, "-m", "conformance", "report", str(tmp_path / "in"), "-o", str(tmp_path / "page.html")]
    findings = tmp_path / "page-details" / "impl-mypkg.html"  # the implementation's page: its findings
    subprocess.run([*command, "--expectations", str(path)], cwd=REPO, check=True, capture_output=True, timeout=120)
    assert "KNOWN-ROUNDING-REASON" in findings.read_text()
    subprocess.run(command, cwd=REPO, check=True, capture_output=True, timeout=120)
    assert "KNOWN-ROUNDING-REASON" not in findings.read_text()


def test_schema_1_files_are_read_and_converted(tmp_path):
    old = {"schema": 1, "header": {"implementation": "x"}, "records": [
        {"nodeid": "a", "clauses": ["api.forward-value"], "variant": "reentrant", "device": "cpu", "outcome": o,
         "message": m, "duration": 0.0}
        for o, m in [("pass", ""), ("expected_deviation", "e"), ("unclaimed_pass", ""), ("crash", "died"),
                     ("fail", "expected deviation did not occur (remove it from expectations.toml): [XPASS(strict)]")]]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    assert [r.verdict for r in read_results(path).records] == [
        "pass", "expected_deviation", "unclaimed_pass", "crash", "fixed_deviation"]


def test_schema_2_records_take_their_level_from_the_clause_registry(tmp_path):
    old = {"schema": 2, "header": {"implementation": "x"}, "records": [
        {"nodeid": n, "clauses": [c], "variant": "reentrant", "device": "cpu", "status": "fail", "expected": None,
         "message": "", "duration": 0.0, "notes": []}
        for n, c in [("a", "api.forward-value"), ("b", "modulestate.buffers-match"), ("c", "debug.rejects-context-fn")]]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    assert [(r.level, r.verdict) for r in read_results(path).records] == [
        ("MUST", "fail"), ("SHOULD", "should"), ("OBSERVED", "differs")]


def test_an_unknown_schema_is_a_one_line_error_naming_it(tmp_path):
    path = tmp_path / "future.json"
    path.write_text(json.dumps({"schema": 9, "header": {}, "records": []}))
    result = subprocess.run([sys.executable, "-m", "conformance", "report", str(path), "-o", str(tmp_path / "p.html")],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "schema 9" in result.stderr


def test_rejudging_applies_row_level_breakage_to_failures_only(tmp_path):
    from conformance.data.expectations import load_breakages

    path = _expectations(tmp_path, """
        [[breakage]]
        impl = "conformance.adapters.mypkg"
        failure = { exception = "RuntimeError", message = "boom" }
        reason = "ROW-CAUSE"
    """)
    results = _results("mypkg", [
        Record("t.py::test_a[reentrant]", Facts(["api.forward-value"], "reentrant", "cpu", causes=BOOM), "fail", "boom"),
        Record("t.py::test_b[reentrant]", Facts(["api.same-gradients"], "reentrant", "cpu"), "pass")])
    judged = rejudge(results, [], breakages=load_breakages(path))
    assert [r.verdict for r in judged.records] == ["expected_deviation", "pass"]
    assert "ROW-CAUSE" in judged.records[0].expected.reason
