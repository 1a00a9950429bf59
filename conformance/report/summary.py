"""The compact view at the top of the report: areas × runs, before the clause matrix.

Each cell counts the area's clauses that pass in that run against those with a verdict there (n/a
and never-tested clauses left out) and takes the colour of the worst verdict among them.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.report.model import NA, SEVERITY, Area, Column, Matrix


@dataclass(frozen=True)
class AreaCell:
    passed: int
    counted: int  # clauses of the area with a verdict in this run (not n/a)
    worst: str  # the worst of their verdicts; n/a when none binds the run

    @property
    def text(self) -> str:
        return f"{self.passed}/{self.counted}" if self.counted else "·"


def area_cell(area: Area, column: Column) -> AreaCell:
    verdicts = [row.cells[column].verdict for row in area.rows if row.tested and row.cells[column].verdict != NA]
    worst = next((v for v in SEVERITY if v in verdicts), NA)
    return AreaCell(sum(v == "pass" for v in verdicts), len(verdicts), worst)


def area_summary(matrix: Matrix) -> list[tuple[Area, list[AreaCell]]]:
    """(area, one cell per column) for every area with a tested clause, in the matrix's order."""
    return [(area, [area_cell(area, column) for column in matrix.columns])
            for area in matrix.areas if any(row.tested for row in area.rows)]
