"""``python -m conformance clauses``: the clause registry as text, so that a user finds the ids ``--clause`` takes
(a clause id or an area id) without reading conformance/data/clauses.toml."""

from __future__ import annotations

import textwrap

from conformance.data.registry import Clause, load_areas, load_clauses
from conformance.data.vocabulary import VARIANTS

WIDTH = 100
DETAIL_INDENT = " " * 6


def listing(ids=(), *, text: bool = False) -> str:
    """Each area with its clauses: id, level, variants and title. ``ids`` (area or clause ids, all known) narrows it
    to those and shows their texts and sources, as ``text`` does for every clause; a clause named by its own id
    shows its note too."""
    clauses, areas = load_clauses(), load_areas()
    asked = set(ids)
    chosen = [c for c in clauses.values() if not asked or c.id in asked or c.area in asked]
    id_width = max(len(c.id) for c in chosen)
    lines = []
    for area, title in areas.items():
        inside = [c for c in chosen if c.area == area]
        if not inside:
            continue
        lines.append(f"{area}: {title} ({len(inside)} clause{'s' * (len(inside) != 1)})")
        for clause in inside:
            lines.append(f"  {clause.id:<{id_width}}  {clause.level:<8}  {_variants(clause):<13}  {clause.title}")
            if text or asked:
                lines += _details(clause, note=clause.id in asked)
    if not (text or asked):
        lines.append(f"{len(chosen)} clauses in {len(areas)} areas; `python -m conformance clauses AREA` shows an "
                     "area's texts and sources, `--clause=ID` (either id) runs only their tests")
    return "\n".join(lines)


def _variants(clause: Clause) -> str:
    return "both variants" if set(clause.variants) == set(VARIANTS) else ", ".join(clause.variants)


def _details(clause: Clause, *, note: bool) -> list[str]:
    fields = [(clause.text_kind, clause.text),
              ("source", clause.source_label)]
    if note and clause.note:
        fields.append(("note", clause.note))
    return [textwrap.fill(" ".join(value.split()), WIDTH, initial_indent=f"{DETAIL_INDENT}{name}: ",
                          subsequent_indent=DETAIL_INDENT + "  ", break_on_hyphens=False, break_long_words=False)
            for name, value in fields] + [""]
