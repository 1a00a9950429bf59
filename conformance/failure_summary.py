"""The end of a pytest run: its failures by clause, one entry each, so that one bug reads as one entry.

A broken implementation fails many tests of one clause (the oracle's, the properties', the sweeps'); pytest
prints each failure in full. After them, this lists each clause that failed: its id and level, how many
tests failed, the first one's message (its first line) and the command that reruns that test. A test counts
for each clause its failure is charged to (conformance/facts.py); declared deviations and features not
claimed do not count (vocabulary.VIOLATIONS: the unexpected failures, of any level).

Registered by conformance/plugin.py.
"""

from __future__ import annotations

import pytest

from conformance import facts, registry
from conformance.ids import DEFAULT_IMPL
from conformance.recording import message_of, status_of
from conformance.results import Record
from conformance.vocabulary import VIOLATIONS


def failures_by_clause(reports) -> dict[str, list[Record]]:
    """clause id -> the records of its tests that failed, in the order of ``reports`` (pytest's, per phase)."""
    failed: dict[str, list[Record]] = {}
    for report in reports:
        test = facts.read(report) if isinstance(report, pytest.TestReport) else None
        if test is None:
            continue
        record = Record(report.nodeid, test, status_of(report), message_of(report))
        if record.verdict in VIOLATIONS:
            for clause in test.clauses:
                failed.setdefault(clause, []).append(record)
    return failed


def pytest_terminal_summary(terminalreporter, config):
    failed = failures_by_clause(report for reports in terminalreporter.stats.values() for report in reports)
    if not failed:
        return
    from conformance.report.repro import repro_command  # jinja2 and the report's model: only when something failed

    clauses, impl = registry.load_clauses(), config.getoption("impl") or DEFAULT_IMPL  # as the user named it
    terminalreporter.section("failures by clause")
    for cid, records in failed.items():
        first = records[0]
        lines = [line.strip() for line in first.message.strip().splitlines()] or [""]
        message = next((line for line in lines if line.startswith(f"{cid}:")), lines[0])  # the oracle's: a line per clause
        level = clauses[cid].level if cid in clauses else "?"
        terminalreporter.line(f"{cid} ({level}): {len({r.nodeid for r in records})} test(s) failed")
        terminalreporter.line(f"    first: {first.nodeid}: {message[:200]}")
        terminalreporter.line(f"    rerun: {repro_command(first, impl)}")
