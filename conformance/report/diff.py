"""What changed since a baseline: the cells whose verdict differs, in columns both report sets have."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.report.model import Column, Matrix
from conformance.data.vocabulary import SEVERITY


@dataclass(frozen=True)
class Change:
    clause: str
    column: Column
    old: str
    new: str

    @property
    def direction(self) -> str:
        """"worse" / "better" by the verdicts' severity; "changed" for one the clause does not bind (n/a)."""
        if "n/a" in (self.old, self.new):
            return "changed"
        return "worse" if SEVERITY.index(self.new) < SEVERITY.index(self.old) else "better"


@dataclass
class Diff:
    changes: list[Change]
    new_columns: list[Column]  # columns only the current reports have
    dropped_columns: list[Column]  # columns only the baseline has

    def change(self, clause: str, column: Column) -> Change | None:
        return self._index.get((clause, column))

    def __post_init__(self):
        self._index = {(c.clause, c.column): c for c in self.changes}

    def count(self, direction: str) -> int:
        return sum(c.direction == direction for c in self.changes)


def compare(baseline: Matrix, current: Matrix) -> Diff:
    shared = [c for c in current.columns if c in baseline.columns]
    changes = []
    for row in current.rows:
        for column in shared:
            old = baseline.cell(row.clause.id, column)
            new = row.cells[column]
            if old is not None and old.verdict != new.verdict:
                changes.append(Change(row.clause.id, column, old.verdict, new.verdict))
    return Diff(
        changes=changes,
        new_columns=[c for c in current.columns if c not in baseline.columns],
        dropped_columns=[c for c in baseline.columns if c not in current.columns],
    )
