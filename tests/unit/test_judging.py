"""The judge reads what happened in a phase (conformance/plugin/judging.py, ``_status``) from the report as pytest made it,
before it gives pytest the outcome that says what the result means; the recorder writes that status unchanged."""

from types import SimpleNamespace

import pytest

from conformance.plugin.judging import _status


def report(when, outcome, **extra):
    return SimpleNamespace(when=when, failed=outcome == "failed", skipped=outcome == "skipped",
                           passed=outcome == "passed", **extra)


@pytest.mark.parametrize("when, outcome, status", [
    ("setup", "failed", "error"), ("setup", "skipped", "skip"), ("setup", "passed", "pass"),
    ("call", "failed", "fail"), ("call", "skipped", "skip"), ("call", "passed", "pass"),
    ("teardown", "failed", "error"),
])
def test_a_phase_reads_as_pytest_made_it(when, outcome, status):
    assert _status(report(when, outcome)) == status


def test_pytests_own_xfail_mark_reads_as_what_happened():
    assert _status(report("call", "skipped", wasxfail="")) == "fail"  # xfailed: it failed
    assert _status(report("call", "passed", wasxfail="")) == "pass"  # XPASS
