"""Renders a :class:`~conformance.report.model.Matrix` (and a baseline diff) as a static site: an index
page and its detail pages (conformance/report/layout.py), each with inline CSS, no script and no
external resource. Jinja2 autoescapes every value, so text from results files (implementation
messages, test ids) can only ever appear as text."""

from __future__ import annotations

import datetime
import functools
from pathlib import Path

import jinja2

import conformance
from conformance.report.diff import Diff
from conformance.data.findings import Finding
from conformance.report.layout import Layout, finding_script
from conformance.report.model import NA, Cell, Column, Matrix, Run
from conformance.report.repro import repro_command, source_location
from conformance.report.summary import area_summary
from conformance.report.sweeps import sweep_view
from conformance.data.results import now
from conformance.data.vocabulary import SEVERITY, VERDICTS

TEMPLATES = Path(__file__).with_name("templates")

# verdict -> (symbol, label, what it means), from the vocabulary.
LOOK = {name: (v.symbol, v.label, v.meaning) for name, v in VERDICTS.items()}
ENVIRONMENT_ORDER = ("implementation", "implementation_name", "implementation_module", "implementation_version",
                     "capabilities.source",
                     "variant", "device", "torch", "cuda_available", "python", "platform", "harness")
# A cell's tooltip names this many distinct messages at most: a sweep clause can fail with hundreds, and
# every one of them is spelled out on the implementation's page.
TOOLTIP_MESSAGES = 5


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(LOOK=LOOK, SEVERITY=SEVERITY, VERDICTS=SEVERITY, NA=NA)
    env.filters.update(percent=_percent, css=_css, first_line=_first_line, anchor=_anchor, label=_label,
                       tooltip=_tooltip, repro_command=repro_command, source_location=source_location)
    return env


def render_site(matrix: Matrix, diff: Diff | None = None, *, index: str = "index.html",
                title: str = "Activation checkpointing conformance", baseline_sources: list[str] = (),
                findings: list[Finding] = ()) -> dict[str, str]:
    """Every page of the report: {its path relative to the index's folder: its HTML}. ``index`` is the
    index's file name; the detail pages go into the folder Layout names after it. ``findings`` (the registry,
    conformance/data/findings.py) adds their page, whose script links lead to copies the caller puts beside it
    (layout.finding_script)."""
    layout = Layout.of(matrix, index)
    env = environment()
    common = dict(title=title, matrix=matrix, diff=diff, layout=layout, baseline_sources=list(baseline_sources),
                  findings=list(findings),
                  generated=datetime.datetime.fromisoformat(now()).strftime("%Y-%m-%d %H:%M UTC"),
                  harness=conformance.__version__)

    def page(path: str, template: str, **values) -> tuple[str, str]:
        # `link(to, anchor)` in a template is the relative link from this page, `here`.
        link = functools.partial(layout.href, path)
        return path, env.get_template(template).render(**common, **values, here=path, link=link)

    sweeps = sweep_view(matrix)
    pages = [page(index, "index.html.j2", area_summary=area_summary(matrix), sweeps=sweeps)]
    for implementation, path in layout.implementations.items():
        runs = [run for run in matrix.runs if run.implementation == implementation]
        pages.append(page(path, "implementation.html.j2", implementation=implementation,
                          columns=[c for c in matrix.columns if c.implementation == implementation],
                          runs=runs, environment=_environment_table(runs)))
    pages += [page(layout.areas[area.id], "area.html.j2", area=area) for area in matrix.areas if area.id in layout.areas]
    if sweeps:
        pages.append(page(layout.sweeps, "sweeps.html.j2", sweeps=sweeps))
    if diff is not None:
        pages.append(page(layout.changes, "changes.html.j2"))
    if findings:
        clauses = {row.clause.id: row.clause for row in matrix.rows}
        pages.append(page(layout.findings, "findings.html.j2", clauses=clauses,
                          script=functools.partial(finding_script, index)))
    return dict(pages)


def _environment_table(runs: list[Run]) -> list[tuple[str, list[str]]]:
    """(key, value per run) for every header key any run has; nested dicts flattened as a.b."""
    flat = [dict(_flatten(run.header)) for run in runs]
    keys = list(dict.fromkeys([k for k in ENVIRONMENT_ORDER if any(k in f for f in flat)] + [k for f in flat for k in f]))
    return [(key, [f.get(key, "") for f in flat]) for key in keys]


def _flatten(header: dict, prefix: str = ""):
    for key, value in header.items():
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}{key}.")
        elif isinstance(value, list):
            yield f"{prefix}{key}", ", ".join(map(str, value)) or "none"
        else:
            yield f"{prefix}{key}", "" if value is None else str(value)


def _percent(score) -> str:
    return "–" if score.percent is None else f"{score.percent:.0f}%"


def _css(verdict: str) -> str:
    return "v-" + verdict.replace("/", "").replace("_", "-")


def _first_line(text: str, limit: int = 160) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _anchor(column: Column, clause_id: str, matrix: Matrix) -> str:
    return f"d{matrix.columns.index(column)}-{clause_id}"


def _label(column: Column) -> str:
    return f"{column.variant} · {column.device}"


def _tooltip(cell: Cell) -> str:
    if cell.verdict == NA or not cell.records:
        return LOOK[cell.verdict][2]
    counts = ", ".join(f"{n} {LOOK[o][1]}" for o, n in cell.counts)
    notes = list(dict.fromkeys(_first_line(r.message) for r in cell.records if r.verdict != "pass" and r.message))
    noted = [_first_line(n) for r in cell.noted for n in r.notes]
    more = len(notes) - TOOLTIP_MESSAGES
    return (f"{len(cell.records)} test(s): {counts}" + "".join(f"\n• {n}" for n in notes[:TOOLTIP_MESSAGES])
            + (f"\n• … {more} more message(s): the findings list every one" if more > 0 else "")
            + (f"\n† {len(cell.noted)} passing test(s) with notes:" if noted else "")
            + "".join(f"\n† {n}" for n in list(dict.fromkeys(noted))[:3]))
