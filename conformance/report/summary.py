"""The compact view at the top of the report: areas × runs, before the clause matrix.

An area's cell counts the area's clauses that pass in that run against those with a verdict there (n/a
and never-tested clauses left out) and takes the colour of the worst verdict among them.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.report.model import NA, SEVERITY, Area, Column, Matrix


@dataclass(frozen=True)
class Tally:
    """One summary cell: how many of the things counted pass, coloured by the worst verdict among them."""

    passed: int
    counted: int
    worst: str  # the worst verdict counted; n/a when nothing was
    upstream: tuple[str, ...] = ()  # known upstream bugs behind failures counted (their names)

    @classmethod
    def of(cls, verdicts: list[str], passing: tuple[str, ...] = ("pass",)) -> Tally:
        return cls(sum(v in passing for v in verdicts), len(verdicts), next((v for v in SEVERITY if v in verdicts), NA))

    @property
    def text(self) -> str:
        return f"{self.passed}/{self.counted}" if self.counted else "·"


def area_cell(area: Area, column: Column) -> Tally:
    cells = [row.cells[column] for row in area.rows if row.tested and row.cells[column].verdict != NA]
    tally = Tally.of([cell.verdict for cell in cells])
    return Tally(tally.passed, tally.counted, tally.worst, tuple(dict.fromkeys(b.bug for c in cells for b in c.upstream)))


def area_summary(matrix: Matrix) -> list[tuple[Area, list[Tally]]]:
    """(area, one cell per column) for every area with a tested clause, in the matrix's order."""
    return [(area, [area_cell(area, column) for column in matrix.columns]) for area in matrix.areas if area.tested]
