"""Findings a maintainer can file: declared deviations whose cause is a bug no upstream report names (or one this
project reported), each with a standalone script that needs only torch and the package.

The registry is ``findings/findings.toml`` at the checkout's root; each script (``findings/<project>_<slug>.py``)
carries its upstream report as its docstring, takes ``--impl MODULE`` (default: the package's checkpoint), and
exits 1 when the bug shows, 0 when the behaviour is right. ``python -m conformance findings`` lists them; with
``--check`` it runs each script whose package is importable here, on the package (it must exit 1) and on the
finding's ``right`` module (torch's checkpoint, or the reference for torch's own findings: it must exit 0). A
script that passes on the package is flagged like a fixed deviation. Imports neither pytest nor torch: the report
renders the registry too.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from conformance.data.datafiles import FORBID, DataFileError, entries, read_toml
from conformance.data.registry import load_clauses

FINDINGS_PATH = Path("findings") / "findings.toml"  # relative to a checkout's root (tox passes it explicitly)
STATUSES = ("new", "reported", "fixed")  # fixed: the pinned package passes its script (kept as a regression check)
UPSTREAM = re.compile(r"[\w.-]+/[\w.-]+#\d+")
BUG_SHOWS, BEHAVES = 1, 0  # a script's exit status
SCRIPT_TIMEOUT = 600.0  # seconds per run: importing a package (unsloth, colossalai) takes a while on a busy machine


@dataclass(frozen=True)
class Declaration:
    """The expectations.toml entry a finding explains: the implementation and clause it is declared for."""

    __pydantic_config__ = FORBID
    impl: str
    clause: str
    variant: str | None = None


@dataclass(frozen=True)
class Finding:
    __pydantic_config__ = FORBID  # conformance/data/datafiles.py: an unknown key in findings.toml fails at load

    id: str
    project: str
    title: str
    clause: str  # the clause id (conformance/data/clauses.toml) whose text the bug breaks
    status: str  # STATUSES
    script: Path  # absolute once loaded (the file gives it relative to itself)
    package: str  # the module that must be importable for the script to run
    tox_env: str  # the env of `tox -m compat` where the package is installed
    right: str  # the module the script passes on: torch.utils.checkpoint, or reference_impl for torch's findings
    declaration: Declaration
    reported_as: str = ""  # owner/repo#N once reported
    url: str = ""
    verified: bool = True  # False: written from the recorded cause, never run on the package here
    searched: str = ""  # where and when upstream was searched, and what came closest

    @property
    def status_text(self) -> str:
        return f"{self.status} as {self.reported_as}" if self.reported_as else self.status


def load_findings(path: Path = FINDINGS_PATH) -> list[Finding]:
    """The registry, each entry checked: known clause and status, an upstream report where reported, the script there."""
    path = Path(path)
    clauses, findings = load_clauses(), []
    read = entries(path, "finding", read_toml(path, ("finding",))["finding"], Finding, name=lambda e: e.get("id", "?"))
    for index, finding in enumerate(read, start=1):
        finding = replace(finding, script=(path.parent / finding.script).resolve())
        where = f"{path}: [[finding]] #{index} ({finding.id})"
        problems = [f"unknown clause {c!r}" for c in {finding.clause, finding.declaration.clause} if c not in clauses]
        if finding.status not in STATUSES:
            problems.append(f"status {finding.status!r} is none of {STATUSES}")
        if (finding.status == "reported") != bool(UPSTREAM.fullmatch(finding.reported_as)):
            problems.append("a reported finding, and only one, names its report as reported_as = 'owner/repo#N'")
        if not finding.script.is_file():
            problems.append(f"no script {finding.script}")
        if problems:
            raise DataFileError(f"{where}: " + "; ".join(problems))
        findings.append(finding)
    duplicated = sorted({f.id for f in findings if [g.id for g in findings].count(f.id) > 1})
    if duplicated:
        raise DataFileError(f"{path}: duplicated finding ids {duplicated}")
    return findings


@dataclass(frozen=True)
class Outcome:
    finding: Finding
    verdict: str  # "confirmed", "fixed?", "wrong script", "not checked"
    detail: str

    @property
    def failed(self) -> bool:
        return self.verdict in ("fixed?", "wrong script")


def check(finding: Finding, *, timeout: float = SCRIPT_TIMEOUT) -> Outcome:
    """Run the finding's script on its package and on its ``right`` module, with this interpreter (in this
    environment, where the package is installed or not)."""
    absent = [name for name in (finding.package, finding.right) if not _importable(name)]
    if absent:
        return Outcome(finding, "not checked", f"here: {', '.join(absent)} absent")
    on_package = _run(finding.script, (), timeout)
    on_right = _run(finding.script, ("--impl", finding.right), timeout)
    expected = BEHAVES if finding.status == "fixed" else BUG_SHOWS
    for run, name in ((on_package, finding.package), (on_right, finding.right)):
        if run.crashed:
            return Outcome(finding, "wrong script", f"the script crashed on {name}: {run.tail}")
    if on_right.returncode != BEHAVES:
        return Outcome(finding, "wrong script", f"fails on {finding.right} too (the script, or {finding.right}, "
                       f"is wrong): {on_right.tail}")
    if on_package.returncode != expected:
        if expected == BUG_SHOWS:
            return Outcome(finding, "fixed?", f"fixed upstream? the script passes on {finding.package} "
                           "(remove the finding or mark it fixed)")
        return Outcome(finding, "fixed?", f"marked fixed, but the script fails on {finding.package}: {on_package.tail}")
    shows = "passes on" if expected == BEHAVES else "fails on"
    return Outcome(finding, "confirmed", f"{shows} {finding.package}, passes on {finding.right}: {on_package.tail}")


@dataclass(frozen=True)
class _Run:
    returncode: int
    tail: str  # the script's last line of output, its "actual" line (a crash's: its exception)
    crashed: bool  # a traceback or a timeout: the script itself failed, not the behaviour it checks


def _run(script: Path, args, timeout: float) -> _Run:
    try:
        done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=timeout,
                              cwd=script.parent)
    except subprocess.TimeoutExpired:
        return _Run(-1, f"timed out after {timeout:g} s", True)
    crashed = "Traceback (most recent call last)" in done.stderr or done.returncode not in (BUG_SHOWS, BEHAVES)
    shown = done.stderr if crashed or not done.stdout.strip() else done.stdout  # a crash: its exception
    lines = [line.strip() for line in shown.splitlines() if line.strip()]
    return _Run(done.returncode, lines[-1] if lines else "(no output)", crashed)


def _importable(module: str) -> bool:
    """Whether ``module``'s top-level package is installed, without importing it (torch and the rest are heavy)."""
    return importlib.util.find_spec(module.partition(".")[0]) is not None


def listing(findings: list[Finding]) -> str:
    """One line per finding: id, project, clause, status, script (relative to the registry), verified or not."""
    rows = [(f.id, f.project, f.clause, f.status_text,
             f"{f.script.parent.name}/{f.script.name}" + ("" if f.verified else "  (not verified on the package)"))
            for f in findings]
    widths = [max(len(row[column]) for row in rows) for column in range(4)] if rows else []
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1]
                     for row in rows) or "no findings"


def main(path: Path, *, projects=(), run_checks: bool = False) -> int:
    """``python -m conformance findings``: 0, or 1 when a check failed, 2 when the registry or a project is unknown."""
    try:
        findings = load_findings(path)
    except (OSError, ValueError) as error:
        print(f"python -m conformance findings: {error}", file=sys.stderr)
        return 2
    unknown = sorted(set(projects) - {f.project for f in findings})
    if unknown:
        print(f"python -m conformance findings: no finding of project(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    chosen = [f for f in findings if not projects or f.project in projects]
    if not run_checks:
        print(listing(chosen))
        return 0
    outcomes = [check(finding) for finding in chosen]
    for outcome in outcomes:
        print(f"{outcome.finding.id}: {outcome.verdict}: {outcome.detail}")
    failed = [o.finding.id for o in outcomes if o.failed]
    unchecked = sum(o.verdict == "not checked" for o in outcomes)
    print(f"{len(outcomes) - len(failed) - unchecked} of {len(outcomes)} finding(s) as registered, {unchecked} not "
          f"checked here" + (f"; to look at: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0
