"""The end of a pytest run: its failures by cause, each cause once, so that one bug reads as one screen.

A broken implementation fails many tests (the oracle's, the properties', the sweeps', the models'), in many
clauses and areas, for one reason. As the report's "Failures by cause" does (conformance/report/model.py,
``signature``), this groups the run's unexpected failures by what they look like and prints each cause once:
the clauses, areas and runs (variant · device) it reaches, its simplest test (of its worst verdict, a hand-written test
before a property, the oracle, a sweep or a model), that test's message, the command that reruns it and a
standalone reproducer script where one of its tests wrote one. Failures that match a known upstream bug of torch
(an implementation built on torch's checkpoint inherits them) and failures of clauses that do not bind (SHOULD,
OBSERVED) are listed apart, a line each. A test counts for the clauses its failure is charged to
(conformance/data/facts.py); declared deviations and features not claimed do not count.

With more than one test selected and no --tb given, each failure's traceback is one line (pytest's --tb=line), and
pytest's list of FAILED tests is left out (no -r given): the causes say it, and the rerun command of one test
shows its whole traceback. Registered by conformance/plugin/__init__.py.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conformance.data import facts, registry
from conformance.plugin import reproducers
from conformance.plugin.binding import load_implementation  # loaded already: the run's own
from conformance.data.ids import DEFAULT_IMPL
from conformance.plugin.recording import message_of
from conformance.data.results import Record
from conformance.data.vocabulary import NOT_BINDING, VERDICTS, VIOLATIONS

WIDTH = 160  # a message line, cut at a word


def pytest_collection_finish(session):
    config = session.config
    if len(session.items) > 1 and any(facts.clause_ids_of(item) for item in session.items):  # conformance tests
        if config.option.tbstyle == "auto":  # pytest's default: no --tb given
            config.option.tbstyle = "line"
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if config.option.reportchars == "fE" and reporter is not None:  # pytest's default: no -r given
            reporter.reportchars = reporter.reportchars.replace("f", "")  # errors (harness problems) stay listed


def failed_records(reports) -> list[Record]:
    """The records of the tests that failed unexpectedly (vocabulary.VIOLATIONS), in pytest's order."""
    records = []
    for report in reports:
        test = facts.read(report) if isinstance(report, pytest.TestReport) else None
        if test is not None:
            record = Record(report.nodeid, test, facts.status(report), message_of(report), report.duration)
            if record.verdict in VIOLATIONS:
                records.append(record)
    return records


def message_line(record: Record) -> str:
    lines = [line.strip() for line in record.message.strip().splitlines() if line.strip()] or [""]
    charged = next((line for line in lines if any(line.startswith(f"{c}:") for c in record.clauses)), lines[0])
    return textwrap.shorten(charged, WIDTH, placeholder=" …")  # the oracle's message: a line per clause


def _joined(values) -> str:
    return ", ".join(dict.fromkeys(values))


def cause_lines(group, rerun, reproducer) -> list[str]:
    """The lines of one cause (a report.model.CauseGroup): what it reaches, its simplest test, how to rerun and
    reproduce it."""
    first = group.simplest
    look = VERDICTS[first.verdict]
    runs = _joined(f"{column.variant} · {column.device}" for column in group.columns)
    lines = [f"{look.symbol} {group.signature}: {len({r.nodeid for r in group.records})} test(s), {look.label}",
             f"    clauses: {_joined(group.clauses)}",
             f"    areas: {_joined(group.areas)} · runs: {runs}",
             f"    simplest test: {first.nodeid}",
             f"      {message_line(first)}",
             f"    rerun: {rerun(first)}"]
    script = next((r for r in group.records if r.reproducer), None)
    if script is not None:
        lines.append(f"    reproducer: python {reproducer(script)}")
    return lines


def by_cause(records: list[Record], implementation: str) -> list:
    """The records' groups by cause, as the report's (report.model.cause_groups), most tests first."""
    from conformance.report.model import Column, cause_groups  # jinja2's report: only when something failed

    clauses = registry.load_clauses()
    return cause_groups((r, Column(implementation, r.variant, r.device), c, clauses[c].area if c in clauses else "unregistered")
                        for r in records for c in r.clauses)


def summary(records: list[Record], implementation: str, rerun, reproducer) -> list[str]:
    """The closing summary of a run's failed records: its causes, then what it inherits, then what does not bind."""
    inherited = [r for r in records if r.upstream]
    binding = [r for r in records if not r.upstream and r.verdict not in NOT_BINDING]
    not_binding = [r for r in records if not r.upstream and r.verdict in NOT_BINDING]
    causes = by_cause(binding, implementation)
    blocks = [[f"{len(causes)} cause(s) of {len({r.nodeid for r in binding})} failed test(s); each cause once, with "
               f"its simplest test:"]] if causes else []
    blocks += [cause_lines(group, rerun, reproducer) for group in causes]
    if inherited:
        bugs: dict[str, list[Record]] = {}
        for record in inherited:
            bugs.setdefault(record.upstream.bug, []).append(record)
        blocks.append(["⇡ inherited from torch's known upstream bugs (torch.utils.checkpoint fails these too):"] + [
            "    " + textwrap.shorten(f"{bug} ({_joined(c for r in group for c in r.clauses)}; {len(group)} test(s)): "
                                      f"{group[0].upstream.summary}", WIDTH, placeholder=" …")
            for bug, group in bugs.items()])
    if not_binding:
        blocks.append(["not binding (SHOULD/MAY unmet, OBSERVED differences from torch; they do not fail the run):"] + [
            "    " + textwrap.shorten(f"{VERDICTS[group.simplest.verdict].symbol} {group.signature}: {len(group.records)} "
                                      f"test(s) ({_joined(group.clauses)})", WIDTH, placeholder=" …")
            for group in by_cause(not_binding, implementation)])
    return [line for n, block in enumerate(blocks) for line in ([""] * bool(n) + block)]


def pytest_terminal_summary(terminalreporter, config):
    records = failed_records(report for reports in terminalreporter.stats.values() for report in reports)
    if not records:
        return
    from conformance.report.repro import repro_command

    impl = config.getoption("impl") or DEFAULT_IMPL  # as the user named it (the rerun command's)
    implementation = load_implementation(impl).id
    into = reproducers.folder(config.getoption("conformance_reproducers"), config.getoption("results"),
                              implementation, config.invocation_params.dir)

    def reproducer(record: Record) -> str:
        script = into.parent / record.reproducer
        return str(script.relative_to(Path.cwd())) if script.is_relative_to(Path.cwd()) else str(script)

    terminalreporter.section("failures by cause")
    for line in summary(records, implementation, lambda r: repro_command(r, impl), reproducer):
        terminalreporter.line(line)
