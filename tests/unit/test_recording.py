"""The recorder (conformance/plugin/recording.py) writes what the judge decided: each phase's status as the judge read
it before it gave pytest its outcome, the facts as judged; a setup or teardown error outranks a passing call."""

import json
from types import SimpleNamespace

import pytest

from conformance.data import facts
from conformance.data.facts import Expected, Facts
from conformance.data.results import read_results
from conformance.plugin.recording import Recorder

JUDGED = Facts(("api.forward-value",), "reentrant", "cpu", expected=Expected("deviation", "declared"))


def report(when, status, pytest_outcome, longrepr=None):
    made = SimpleNamespace(nodeid="t::test", when=when, outcome=pytest_outcome, longrepr=longrepr, duration=0.5,
                           user_properties=[])
    facts.write(made, JUDGED)
    setattr(made, facts.STATUS, status)
    return made


def record_of(tmp_path, *reports):
    recorder = Recorder(None, tmp_path / "r.json", header=lambda: {"implementation": "x"})
    for phase in reports:
        recorder.pytest_runtest_logreport(phase)
    recorder.pytest_sessionfinish(SimpleNamespace(), 0)
    [record] = read_results(tmp_path / "r.json").records
    stream = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    return record, stream


def test_an_expected_failure_is_recorded_as_the_failure_it_was(tmp_path):
    """pytest shows it as xfailed (skipped): the record keeps what happened, and what was expected, apart."""
    record, stream = record_of(tmp_path, report("setup", "pass", "passed"), report("call", "fail", "skipped"),
                               report("teardown", "pass", "passed"))
    assert (record.status, record.expected, record.duration) == ("fail", JUDGED.expected, 1.5)
    assert record.verdict == "expected_deviation"
    assert [event["event"] for event in stream] == ["record"]


@pytest.mark.parametrize("teardown, status", [("error", "error"), ("pass", "pass")])
def test_a_teardown_error_outranks_a_passing_call(tmp_path, teardown, status):
    record, _ = record_of(tmp_path, report("setup", "pass", "passed"), report("call", "pass", "passed"),
                          report("teardown", teardown, "failed" if teardown == "error" else "passed", "boom"))
    assert record.status == status
