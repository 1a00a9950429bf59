"""Only a MUST binds: a failing test of a SHOULD, MAY or OBSERVED clause does not fail the run.

The docs make MUST clauses binding; SHOULD and MAY only recommend, and an OBSERVED clause records what
torch does where the docs are silent. So an implementation that behaves like torch where the docs allow
it passes the run. A test is held to the strictest level among the clauses its failure is charged to
(``clauses`` on its user_properties, which the sweeps and the isolation hook narrow to the check that
failed): below MUST, its failure is reported with a verdict of its own (vocabulary.py: "SHOULD unmet",
"differs from torch"), in pytest's summary line and a section of the terminal summary, and pytest's exit
status leaves it out. ``--strict-levels`` holds every clause to MUST: such failures then fail the run.

Registered by conformance/plugin.py.
"""

from __future__ import annotations

import pytest

from conformance.recording import STRICT_XPASS
from conformance.registry import level_of
from conformance.vocabulary import BINDING_LEVEL, NOT_BINDING, VERDICTS, verdict

NOT_BINDING_KEY = "not_binding"  # user_properties: the level of a failure that does not bind


def _look(level: str):
    return VERDICTS[verdict("fail", None, level)]


@pytest.hookimpl(wrapper=True, tryfirst=True)  # the outermost wrapper: it sees the report as breakages left it
def pytest_runtest_makereport(item, call):
    report = yield
    if (report.when != "call" or not report.failed or item.config.getoption("strict_levels")
            or str(report.longrepr).startswith(STRICT_XPASS)):  # a declared deviation that vanished stays a failure
        return report
    level = level_of(dict(item.user_properties).get("clauses", ()))
    if level != BINDING_LEVEL:
        # pytest's own way to keep a failure out of the exit status: an expected failure. The results
        # recorder reads it back as status "fail"; the level makes its verdict.
        report.outcome = "skipped"
        report.wasxfail = f"{level} clause: {_look(level).label}, not a failure (--strict-levels makes it one)"
        report.user_properties.append((NOT_BINDING_KEY, level))
    return report


@pytest.hookimpl(tryfirst=True)  # before pytest's own xfail status
def pytest_report_teststatus(report, config):
    level = dict(getattr(report, "user_properties", ())).get(NOT_BINDING_KEY)  # a collection report has none
    if level and report.when == "call":
        look = _look(level)
        return look.label, look.progress, look.label.upper()
    return None


def pytest_terminal_summary(terminalreporter, config):
    reports = [report for name in NOT_BINDING for report in terminalreporter.stats.get(VERDICTS[name].label, [])]
    if not reports:
        return
    terminalreporter.section("not binding: SHOULD/MAY clauses unmet, differences from torch on OBSERVED clauses")
    for report in reports:
        look = _look(dict(report.user_properties)[NOT_BINDING_KEY])
        crash = getattr(report.longrepr, "reprcrash", None)
        message = (crash.message if crash else str(report.longrepr)).strip().splitlines()
        terminalreporter.line(f"{look.label.upper()} {report.nodeid} - {message[0] if message else ''}"[:240])
