"""The end of a pytest run: its failures by cause, each cause once, so that one bug reads as one screen.

A broken implementation fails many tests (the oracle's, the properties', the sweeps', the models'), in many
clauses and areas, for one reason. As the report's "Failures by cause" does (conformance/report/model.py,
``signature``), this groups the run's unexpected failures by what they look like and prints each cause once:
the clauses, areas and runs (variant · device) it reaches, its simplest test (of its worst verdict, a hand-written test
before a property, the oracle, a sweep or a model), that test's message, the command that reruns it and a
standalone reproducer script where one of its tests wrote one. Failures that match a known upstream bug of torch
(an implementation built on torch's checkpoint inherits them) and failures of clauses that do not bind (SHOULD,
OBSERVED) are listed apart, a line each. A test counts for the clauses its failure is charged to
(conformance/facts.py); declared deviations and features not claimed do not count.

With more than one test selected and no --tb given, each failure's traceback is one line (pytest's --tb=line), and
pytest's list of FAILED tests is left out (no -r given): the causes say it, and the rerun command of one test
shows its whole traceback. Registered by conformance/plugin.py.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conformance import facts, reproducers
from conformance.binding import load_implementation  # loaded already: the run's own
from conformance.ids import DEFAULT_IMPL
from conformance.recording import message_of, status_of
from conformance.results import Record
from conformance.vocabulary import NOT_BINDING, VERDICTS, VIOLATIONS

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
            record = Record(report.nodeid, test, status_of(report), message_of(report), report.duration)
            if record.verdict in VIOLATIONS:
                records.append(record)
    return records


def signature(record: Record) -> str:
    from conformance.report.model import signature  # the report's grouping, so both read alike

    return signature(record)


def by_cause(records: list[Record]) -> dict[str, list[Record]]:
    """signature -> its records, most records first."""
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(signature(record), []).append(record)
    return dict(sorted(groups.items(), key=lambda g: -len(g[1])))


def simplest(records: list[Record]) -> Record:
    from conformance.report.model import simplest  # the report's example of a cause, so both show the same test

    return simplest(records)


def message_line(record: Record) -> str:
    lines = [line.strip() for line in record.message.strip().splitlines() if line.strip()] or [""]
    charged = next((line for line in lines if any(line.startswith(f"{c}:") for c in record.clauses)), lines[0])
    return textwrap.shorten(charged, WIDTH, placeholder=" …")  # the oracle's message: a line per clause


def _joined(values) -> str:
    return ", ".join(dict.fromkeys(values))


def cause_lines(records: list[Record], rerun, reproducer) -> list[str]:
    """The lines of one cause: what it reaches, its simplest test, how to rerun and reproduce it."""
    first = simplest(records)
    clauses = [c for r in records for c in r.clauses]
    runs = _joined(f"{r.variant} · {r.device}" for r in records)
    look = VERDICTS[first.verdict]
    lines = [f"{look.symbol} {signature(first)}: {len({r.nodeid for r in records})} test(s), {look.label}",
             f"    clauses: {_joined(clauses)}",
             f"    areas: {_joined(c.split('.')[0] for c in clauses)} · runs: {runs}",
             f"    simplest test: {first.nodeid}",
             f"      {message_line(first)}",
             f"    rerun: {rerun(first)}"]
    script = next((r for r in records if r.reproducer), None)
    if script is not None:
        lines.append(f"    reproducer: python {reproducer(script)}")
    return lines


def summary(records: list[Record], rerun, reproducer) -> list[str]:
    """The closing summary of a run's failed records: its causes, then what it inherits, then what does not bind."""
    inherited = [r for r in records if r.upstream]
    binding = [r for r in records if not r.upstream and r.verdict not in NOT_BINDING]
    not_binding = [r for r in records if not r.upstream and r.verdict in NOT_BINDING]
    causes = by_cause(binding)
    blocks = [[f"{len(causes)} cause(s) of {len({r.nodeid for r in binding})} failed test(s); each cause once, with "
               f"its simplest test:"]] if causes else []
    blocks += [cause_lines(group, rerun, reproducer) for group in causes.values()]
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
            "    " + textwrap.shorten(f"{VERDICTS[group[0].verdict].symbol} {cause}: {len(group)} test(s) "
                                      f"({_joined(c for r in group for c in r.clauses)})", WIDTH, placeholder=" …")
            for cause, group in by_cause(not_binding).items()])
    return [line for n, block in enumerate(blocks) for line in ([""] * bool(n) + block)]


def pytest_terminal_summary(terminalreporter, config):
    records = failed_records(report for reports in terminalreporter.stats.values() for report in reports)
    if not records:
        return
    from conformance.report.repro import repro_command  # jinja2 and the report's model: only when something failed

    impl = config.getoption("impl") or DEFAULT_IMPL  # as the user named it
    into = reproducers.folder(config.getoption("conformance_reproducers"), config.getoption("results"),
                              load_implementation(impl).id, config.invocation_params.dir)

    def reproducer(record: Record) -> str:
        script = into.parent / record.reproducer
        return str(script.relative_to(Path.cwd())) if script.is_relative_to(Path.cwd()) else str(script)

    terminalreporter.section("failures by cause")
    for line in summary(records, lambda r: repro_command(r, impl), reproducer):
        terminalreporter.line(line)
