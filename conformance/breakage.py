"""Applies row-level known breakage (``[[breakage]]`` in expectations.toml, see expectations.Breakage).

A failing test of a row with a declared breakage becomes an expected deviation with the breakage's
reason (tests already expected to fail, declared deviations and unclaimed capabilities, keep their
own verdict). A breakage none of whose row's tests failed in this run is stale: the run says so and
exits non-zero, as an expected deviation that did not occur does (``python -m conformance run`` judges
the same from the merged records of all its attempts: expectations.stale_breakages).

Registered by ``conformance/suite/conftest.py`` (``pytest_runtest_makereport``, ``pytest_sessionfinish``,
``pytest_terminal_summary``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from conformance import expectations
from conformance.plugin import implementation
from conformance.recording import item_param
from conformance.vocabulary import release_of

COVERING = pytest.StashKey[dict]()  # breakage -> [tests of its row that ran, tests that failed]


def _breakage_of(item):
    config = item.config
    if COVERING not in config.stash:
        path = Path(config.getoption("expectations"))
        config.stash[COVERING] = {b: [0, 0] for b in expectations.load_breakages(path)}
    impl, variant = implementation(config).id, item_param(item, "variant")
    clauses = dict(item.user_properties).get("clauses", ())  # as charged now (isolation may have changed them)
    for breakage in config.stash[COVERING]:
        if breakage.covers(impl=impl, variant=variant, torch_release=release_of(torch.__version__), clauses=clauses):
            return breakage
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when != "call" or report.skipped and not hasattr(report, "wasxfail"):
        return report
    breakage = _breakage_of(item)
    if breakage is None:
        return report
    counts = item.config.stash[COVERING][breakage]
    counts[0] += 1
    if report.failed and "XPASS(strict)" not in str(report.longrepr):  # a declared deviation gone stale stays a failure
        counts[1] += 1
        report.outcome = "skipped"
        report.wasxfail = breakage.expected.reason
        report.user_properties.append(("expected", {"kind": "deviation", "reason": breakage.expected.reason}))
    return report


def stale_breakages(config) -> list[expectations.Breakage]:
    """Only a whole row's session can tell: one narrowed to some clauses or names may hold none of
    the row's failing tests."""
    if config.getoption("clause") or config.getoption("keyword") or config.getoption("markexpr"):
        return []
    return [b for b, (ran, failed) in config.stash.get(COVERING, {}).items() if ran and not failed]


def pytest_sessionfinish(session, exitstatus):
    if stale_breakages(session.config) and session.exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, config):
    for breakage in stale_breakages(config):
        terminalreporter.line(f"stale known breakage (no test of its row failed; remove it from expectations.toml): "
                              f"{breakage.impl} {breakage.variant or ''} {breakage.torch or ''}: {breakage.reason}", red=True)
