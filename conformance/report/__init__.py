"""The HTML compatibility report: results files in, a static site out (an index page and its detail
pages, conformance/report/layout.py), with no script, that can be published as it is.

Knows nothing about pytest: it reads results files (conformance/data/results.py) and the clause registry
(conformance/data/registry.py) only. ``python -m conformance report`` is its command line.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import replace
from pathlib import Path

from conformance.data.expectations import load_breakages, load_deviations, rejudge
from conformance.report.diff import compare
from conformance.data.findings import load_findings
from conformance.report.layout import details_of, finding_script
from conformance.report.model import build
from conformance.report.render import render_site
from conformance.data.results import read_results, write_atomically

__all__ = ["build", "compare", "render_site", "write_report"]


def write_report(paths, output, *, baseline=(), title: str = "Activation checkpointing conformance",
                 expectations: Path | None = None, findings: Path | None = None) -> Path:
    """Render the results files ``paths`` (and, if given, the changes since ``baseline`` files): the index
    page to ``output``, the detail pages into the folder beside it (``compatibility-details/`` for
    ``compatibility.html``). Returns the index's path.

    With ``expectations`` (an expectations.toml), every result is judged again against it without
    re-running: what happened stays, what was expected is recomputed. With ``findings`` (findings/findings.toml),
    the site gets the findings page and a copy of each finding's script."""
    loaded = _load(paths)
    loaded, reproducers = _reproducers(paths, loaded, details_of(Path(output).name))
    if expectations is not None:
        deviations, breakages = load_deviations(Path(expectations)), load_breakages(Path(expectations))
        loaded = [(source, rejudge(results, deviations, breakages=breakages)) for source, results in loaded]
    matrix = build(loaded)
    diff = compare(build(_load(baseline)), matrix) if baseline else None
    output = Path(output)
    registered = load_findings(findings) if findings is not None else []
    scripts = {finding_script(output.name, f.script.name): f.script.read_text(encoding="utf-8") for f in registered}
    pages = render_site(matrix, diff, index=output.name, title=title, baseline_sources=[Path(p).name for p in baseline],
                        findings=registered)
    _write_site({**reproducers, **scripts, **pages}, output)
    return output


def _write_site(pages: dict[str, str], index: Path) -> None:
    """Write ``pages`` beside ``index``, the index last, so that it never links to a page not yet written.
    Pages of an earlier report that this one no longer has (an implementation since dropped) are
    removed: the folder is published as it is."""
    folder = index.parent
    written = {folder / path for path in pages if path != index.name}
    for path in sorted(written):
        write_atomically(path, pages[path.relative_to(folder).as_posix()])
    for stale in set((folder / details_of(index.name)).glob("*.html")) - written:
        stale.unlink()
    write_atomically(index, pages[index.name])


def _reproducers(paths, loaded, details: str):
    """The reproducer scripts the records name (relative to their results file), copied into the site: the
    results with each record's reproducer renamed to its copy (a path relative to the index's folder), and
    the copies {path: text}. A script that is missing is named as it was, unlinked."""
    copies, judged = {}, []
    for number, (path, (source, results)) in enumerate(zip(paths, loaded)):
        records = []
        for record in results.records:
            script = Path(path).parent / record.reproducer if record.reproducer else None
            if script is not None and script.is_file():
                copy = posixpath.join(details, "reproducers", str(number), posixpath.normpath(record.reproducer).lstrip("./"))
                copies[copy] = script.read_text(encoding="utf-8")
                record = replace(record, facts=replace(record.facts, reproducer=copy))
            records.append(record)
        judged.append((source, replace(results, records=records)))
    return judged, copies


def _load(paths):
    """[(source, results)]: a file's source is its path below the folder all the files share (the same
    file name recurs across folders: builtin/, releases/torch-2.6.0/, one folder per shard)."""
    paths = [Path(p) for p in paths]
    common = Path(os.path.commonpath([p.resolve().parent for p in paths])) if paths else Path()
    loaded = []
    for path in paths:
        try:
            loaded.append((path.resolve().relative_to(common).as_posix(), read_results(path)))
        except (KeyError, TypeError, ValueError) as exc:  # JSONDecodeError is a ValueError
            raise ValueError(f"{path}: not a conformance results file ({type(exc).__name__}: {exc})") from None
    return loaded
