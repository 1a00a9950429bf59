"""The sweeps' view: the ops and modules of torch's own test databases where some run deviates.

The sweep tests (conformance/suite/test_sweep_ops.py, test_sweep_modules.py) name the op or module,
the dtype, the sample and the variant in their ids: ``test_op_...[nn.functional.rrelu-float64-sample0-
non_reentrant]``. Hundreds of names pass everywhere; the page lists only those where a run does not,
as name × run cells, under a line that counts them and a tally per run (the index shows these two).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conformance.report.model import Column, Matrix
from conformance.report.summary import Tally
from conformance.data.vocabulary import SEVERITY, worst

SWEEP_FILES = {"conformance/suite/test_sweep_ops.py": "op", "conformance/suite/test_sweep_modules.py": "module"}
SWEEP_ID = re.compile(r"^(?P<name>.+)-(?P<dtype>[a-z0-9]+)-sample(?P<index>\d+)-(?P<variant>non_reentrant|reentrant)$")
# Verdicts that make a swept name a deviation worth a row (an unclaimed feature or a skip is not one).
DEVIATING = ("fail", "should", "differs", "crash", "timeout", "error", "fixed_deviation", "expected_deviation")
NOT_DEVIATING = tuple(v for v in SEVERITY if v not in DEVIATING)


def parse_sweep_id(param_id: str) -> dict | None:
    """``nn.functional.rrelu-float64-sample0-non_reentrant`` -> name, dtype, index, variant."""
    match = SWEEP_ID.match(param_id)
    return None if match is None else {**match.groupdict(), "index": int(match["index"])}


@dataclass
class SweptName:
    kind: str  # "op" | "module"
    name: str
    verdicts: dict[Column, str]  # the worst verdict of the name's tests in each run that swept it
    findings: list[str]  # "clause(s): test id: first line of the message", for each deviating test


@dataclass
class SweepView:
    swept: dict[str, int]  # kind -> how many names were swept
    deviating: list[SweptName]
    runs: dict[Column, Tally]  # per run that swept: the names that do not deviate there / the names it swept

    @property
    def line(self) -> str:
        return (f"{self.swept.get('op', 0)} ops and {self.swept.get('module', 0)} modules swept, "
                f"{len(self.deviating)} deviate")


def sweep_view(matrix: Matrix) -> SweepView | None:
    """None when no results hold a sweep test."""
    names: dict[tuple[str, str], dict[Column, list]] = {}
    for row in matrix.rows:
        for column, cell in row.cells.items():
            for record in cell.records:
                path, _, test = record.nodeid.partition("::")
                parsed = parse_sweep_id(test.partition("[")[2].removesuffix("]")) if path in SWEEP_FILES else None
                if parsed:
                    names.setdefault((SWEEP_FILES[path], parsed["name"]), {}).setdefault(column, []).append(record)
    if not names:
        return None
    swept: dict[str, int] = {}
    deviating = []
    run_verdicts: dict[Column, list[str]] = {}
    for (kind, name), by_column in sorted(names.items()):
        swept[kind] = swept.get(kind, 0) + 1
        verdicts = {column: worst(r.verdict for r in records) for column, records in by_column.items()}
        for column, verdict in verdicts.items():
            run_verdicts.setdefault(column, []).append(verdict)
        if any(v in DEVIATING for v in verdicts.values()):
            findings = sorted({f"{', '.join(r.clauses)}: {r.nodeid.partition('::')[2]}: {r.message.splitlines()[0] if r.message else ''}"
                               for records in by_column.values() for r in records if r.verdict in DEVIATING})
            deviating.append(SweptName(kind, name, verdicts, findings))
    return SweepView(swept, deviating, {column: Tally.of(v, NOT_DEVIATING) for column, v in run_verdicts.items()})
