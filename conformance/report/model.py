"""What the report shows, computed from results files and the clause registry (no pytest, no HTML).

A *column* is one (implementation, variant, device); a *cell* is one clause in one column, with the
verdict aggregated from the records of that clause's tests there: the worst verdict wins (see
vocabulary.SEVERITY), so a cell is ``pass`` only when every test of the clause that ran passed (a
skipped test counts only when every test of the clause was skipped). A record's
verdict derives from its status and what was expected of it (conformance/data/vocabulary.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from conformance.data.causes import patterns_explaining, root
from conformance.data.expectations import declaration_text
from conformance.data.registry import Clause, load_areas, load_clauses
from conformance.data.results import Record, Results
from conformance.data.vocabulary import DEVICES, EXPLAINED, SEVERITY, VARIANTS, VERDICTS, release_of, worst

NA = "n/a"  # the clause does not bind the column's variant
NOT_RUN = "not_run"  # the clause binds it, but no test of it ran there (a record may say why: the runner gave up)

# Verdicts that count for the conformance percentage (MUST clauses only); the vocabulary says which
# conform. Left out: skip (not applicable on that machine), unsupported / unclaimed_pass (the
# implementation does not claim a capability the clause needs), n/a and not_run.
APPLICABLE = tuple(name for name, v in VERDICTS.items() if v.conforms is not None)
CONFORMING = tuple(name for name, v in VERDICTS.items() if v.conforms)


@dataclass(frozen=True)
class Column:
    implementation: str
    variant: str
    device: str

    def sort_key(self, implementations: list[str]):
        return (implementations.index(self.implementation), _index(VARIANTS, self.variant),
                _index(DEVICES, self.device), self.variant, self.device)


@dataclass
class Cell:
    verdict: str
    records: list[Record] = field(default_factory=list)

    @property
    def counts(self) -> list[tuple[str, int]]:
        """(verdict, number of tests), worst first."""
        counts = Counter(r.verdict for r in self.records)
        return [(v, counts[v]) for v in SEVERITY if counts[v]]

    @property
    def noted(self) -> list[Record]:
        """Passing tests the implementation noted something about while they ran (a compiled row: a graph
        break, so part of the test ran as eager Python, not compiled)."""
        return [r for r in self.records if r.notes and r.status == "pass"]

    @property
    def upstream(self) -> list:
        """The known upstream bugs (torch's) that explain failures of the cell: a user's own bug from torch's, at a glance."""
        return list({r.upstream.bug: r.upstream for r in self.records if r.upstream and r.verdict != "pass"}.values())

    @property
    def explained(self) -> list[Record]:
        return [r for r in self.records if r.verdict in EXPLAINED]

    @property
    def findings(self) -> list[tuple[Record, int]]:
        """The explained records, each with how many alike ones it stands for: tests whose capability is not
        claimed (unsupported, pass*) are one finding per verdict and reason, the first test standing for the
        others (a row where everything is unsupported would otherwise spell out thousands of sweep tests)."""
        findings: dict[object, list] = {}
        for record in self.explained:
            alike = (record.verdict, record.expected.reason) if record.expected and record.expected.kind == "unsupported" \
                else id(record)
            findings.setdefault(alike, [record, 0])[1] += 1
        return [(record, count - 1) for record, count in findings.values()]


# The verdicts a maintainer must act on, grouped by cause on an implementation's page (skips and passes are not
# failures; expected deviations and unsupported features are listed per clause).
ACTIONABLE = ("fail", "crash", "timeout", "error", "fixed_deviation", "should", "differs")


def signature(record: Record) -> str:
    """What a failure looks like, alike for every test one bug fails (conformance/data/causes.py): its root cause's
    signature, or, for a record without causes (a crash, a timeout, a fixed deviation), its status and the
    first line of its message."""
    cause = root(record.facts.causes)
    if cause is not None:
        return cause.signature
    first = (record.message or "").strip().splitlines()[:1]
    return f"{record.status}: {first[0][:160] if first else record.verdict}"


# Test modules whose tests run whole programs, models or databases: a cause's simplest test is another's.
HEAVY = ("test_sweep_", "test_models", "test_properties", "test_oracle", "test_distributed")


def simplest(records: list[Record]) -> Record:
    """Of the worst verdict, a hand-written test before a property, an oracle program, a sweep or a model; then the
    shortest id (not the quickest: a report merged from shards must show the same test as the whole run's)."""
    return min(records, key=lambda r: (SEVERITY.index(r.verdict), any(h in r.nodeid for h in HEAVY), len(r.nodeid), r.nodeid))


@dataclass
class CauseGroup:
    """The failures of one implementation that share a cause: the tests, and the clauses and areas they reach."""

    signature: str
    records: list[Record] = field(default_factory=list)
    clauses: dict[str, None] = field(default_factory=dict)
    areas: dict[str, None] = field(default_factory=dict)
    columns: dict["Column", None] = field(default_factory=dict)

    @property
    def simplest(self) -> Record:
        """The test that shows the cause most simply (the group's example)."""
        return simplest(self.records)

    def declaration(self, implementation: str) -> str | None:
        """The expectations entry that would declare this cause for ``implementation`` (None: a failure without
        causes, a crash or a timeout, is not declared by cause)."""
        patterns = [p for record in self.records for p in patterns_explaining(record.facts.causes)]
        if not patterns:
            return None
        return declaration_text(impl=implementation, clauses=self.clauses, patterns=patterns,
                                variants=[c.variant for c in self.columns])


def cause_groups(found) -> list[CauseGroup]:
    """Failures grouped by cause, most tests first: ``found`` holds (record, column, clause id, area id) for each clause
    a failure is charged to in each run (the report's failures by cause; pytest's closing summary, its own run's)."""
    groups: dict[str, CauseGroup] = {}
    seen = set()
    for record, column, clause, area in found:
        group = groups.setdefault(signature(record), CauseGroup(signature(record)))
        if id(record) not in seen:
            seen.add(id(record))
            group.records.append(record)
        group.clauses[clause] = None
        group.areas[area] = None
        group.columns[column] = None
    return sorted(groups.values(), key=lambda g: -len(g.records))


@dataclass
class ClauseRow:
    clause: Clause
    cells: dict[Column, Cell]

    @property
    def tested(self) -> bool:
        # A not-run cell with records counts: the runner planned its tests and says why they did not run.
        return any(c.verdict != NA and (c.verdict != NOT_RUN or c.records) for c in self.cells.values())


@dataclass
class Area:
    id: str
    title: str
    rows: list[ClauseRow]

    @property
    def tested(self) -> bool:
        return any(row.tested for row in self.rows)


@dataclass
class Score:
    conforming: int = 0
    applicable: int = 0

    @property
    def percent(self) -> float | None:
        return 100.0 * self.conforming / self.applicable if self.applicable else None


@dataclass
class Run:
    """One results file: where it came from, the implementation its columns go under, its environment
    header, the columns it fed."""

    source: str
    implementation: str
    header: dict
    columns: list[Column]
    tests: int


@dataclass
class Matrix:
    columns: list[Column]
    areas: list[Area]
    runs: list[Run]

    @property
    def rows(self) -> list[ClauseRow]:
        return [row for area in self.areas for row in area.rows]

    @property
    def implementations(self) -> list[str]:
        return list(dict.fromkeys(c.implementation for c in self.columns))

    def __post_init__(self):
        self._rows = {row.clause.id: row for row in self.rows}

    def cell(self, clause_id: str, column: Column) -> Cell | None:
        row = self._rows.get(clause_id)
        return row.cells.get(column) if row else None

    def modules_not_run(self, implementation: str) -> list[dict]:
        """The suite modules (whole areas) the implementation's runs could not run, and why (their results headers)."""
        found = {m["module"]: m for run in self.runs if run.implementation == implementation
                 for m in run.header.get("modules_not_run", ())}
        return list(found.values())

    def column_score(self, column: Column) -> Score:
        score = Score()
        for row in self.rows:
            verdict = row.cells[column].verdict
            if row.clause.is_must and verdict in APPLICABLE:
                score.applicable += 1
                score.conforming += verdict in CONFORMING
        return score

    def implementation_score(self, implementation: str, level: str = "MUST") -> Score:
        """Per clause of ``level``: applicable if applicable in any of the implementation's columns,
        conforming if it passes in every column where it is applicable.

        ``level="MUST"`` is the conformance percentage (documented MUST clauses only);
        ``level="OBSERVED"`` is torch compatibility: the share of what torch does where the docs are
        silent that the implementation does too (differing there is not non-conformance)."""
        score = Score()
        columns = [c for c in self.columns if c.implementation == implementation]
        for row in self.rows:
            verdicts = [row.cells[c].verdict for c in columns if row.cells[c].verdict in APPLICABLE]
            if row.clause.level == level and verdicts:
                score.applicable += 1
                score.conforming += all(v in CONFORMING for v in verdicts)
        return score

    def noted_passes(self, implementation: str) -> tuple[int, int]:
        """(passing tests with notes, passing tests) of the implementation: how much of its passing ran as
        noted (a compiled row: with a graph break, partly eager)."""
        records = {id(r): r for row in self.rows for c in self.columns if c.implementation == implementation
                   for r in row.cells[c].records if r.status == "pass"}
        return sum(bool(r.notes) for r in records.values()), len(records)

    def failures_by_cause(self, implementation: str) -> list[CauseGroup]:
        """The implementation's actionable failures (ACTIONABLE), one group per cause, most tests first."""
        return cause_groups((record, column, row.clause.id, area.id) for area in self.areas for row in area.rows
                            for column in self.columns if column.implementation == implementation
                            for record in row.cells[column].records if record.verdict in ACTIONABLE)

    def skipped(self, implementation: str) -> list[tuple[str, list[Record]]]:
        """The implementation's skipped tests, by reason (the message), most first."""
        reasons: dict[str, dict[int, Record]] = {}
        for row in self.rows:
            for column in (c for c in self.columns if c.implementation == implementation):
                for record in row.cells[column].records:
                    if record.verdict == "skip":
                        reasons.setdefault(record.message or "(no reason given)", {})[id(record)] = record
        return sorted(((reason, list(records.values())) for reason, records in reasons.items()), key=lambda r: -len(r[1]))

    def totals(self, implementation: str) -> list[tuple[str, int]]:
        """How many cells of the implementation have each verdict, worst first (rows no run tested left out)."""
        counts = Counter(row.cells[c].verdict for row in self.rows if row.tested
                         for c in self.columns if c.implementation == implementation)
        return [(v, counts[v]) for v in SEVERITY if counts[v]]


def build(results: list[tuple[str, Results]], clauses: dict[str, Clause] | None = None,
          areas: dict[str, str] | None = None) -> Matrix:
    """The matrix of the registry's clauses (plus any unknown ids the results name) × the columns
    the results cover. ``results`` is [(source name, Results)]."""
    clauses = dict(load_clauses() if clauses is None else clauses)
    areas = dict(load_areas() if areas is None else areas)
    runs, grouped = [], {}  # grouped: (clause id, Column) -> records
    labels = _release_labels([result.header for _, result in results])
    for (source, result), implementation in zip(results, labels):
        header = result.header
        run_columns: dict[Column, None] = {}
        for record in result.records:
            device = header.get("device") if header.get("device") in DEVICES else (record.device or "cpu")
            column = Column(implementation, record.variant, device)
            run_columns[column] = None
            for clause_id in record.clauses:
                grouped.setdefault((clause_id, column), []).append(record)
                if clause_id not in clauses:
                    clauses[clause_id] = _unregistered(clause_id)
                    areas.setdefault("unregistered", "Clause ids the results name but this harness's clauses.toml lacks")
        runs.append(Run(source, implementation, header, list(run_columns), len(result.records)))
    implementations = list(dict.fromkeys(labels))
    columns = sorted({c for run in runs for c in run.columns}, key=lambda c: c.sort_key(implementations))
    matrix_areas = []
    for area_id, title in areas.items():
        rows = []
        for clause in (c for c in clauses.values() if c.area == area_id):
            cells = {}
            for column in columns:
                records = grouped.get((clause.id, column), [])
                if column.variant not in clause.variants:
                    cells[column] = Cell(NA, records)
                else:
                    cells[column] = Cell(cell_verdict(records), records)
            rows.append(ClauseRow(clause, cells))
        if rows:
            matrix_areas.append(Area(area_id, title, rows))
    return Matrix(columns, matrix_areas, runs)


def cell_verdict(records: list[Record]) -> str:
    """The worst verdict of the tests that ran; skipped tests (not applicable on that machine) count only
    when all of a clause's tests were skipped, so a sweep's few inapplicable samples do not hide its passes."""
    ran = [r.verdict for r in records if r.verdict != "skip"]
    return worst(ran) if ran else "skip" if records else NOT_RUN


def _release_labels(headers: list[dict]) -> list[str]:
    """The implementation each run's columns go under, in the order of ``headers``. Where results of
    several torch releases are reported together, runs on a release other than the most common one get
    columns of their own: ``torch.utils.checkpoint @ torch 2.6``. (Per run, not per file name: the
    results of one implementation on several releases are files of the same name in other folders.)"""
    releases = [release_of(header.get("torch", "")) for header in headers]
    usual = Counter(releases).most_common(1)[0][0] if releases else ""
    return [str(header.get("implementation", "?")) + ("" if release in ("", usual) else f" @ torch {release}")
            for header, release in zip(headers, releases)]


def _unregistered(clause_id: str) -> Clause:
    return Clause(id=clause_id, area="unregistered", title="(not in this harness's clause registry)", level="?",
                  variants=VARIANTS, source="", text="", dimensions=(), text_kind="paraphrase")


def _index(order, value) -> int:
    return order.index(value) if value in order else len(order)
