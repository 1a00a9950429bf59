"""Whole test modules a run could not run: a module that skips at collection (the models area without
transformers) is said in the terminal summary, the results header and the report, not only under ``-rs``.

A hook module the plugin registers (conformance/plugin/__init__.py); the recorder's header reads :func:`recorded`.
"""

from __future__ import annotations

from pathlib import Path

_SKIPPED: dict[str, str] = {}  # module node id -> why it did not run


def pytest_sessionstart(session):
    _SKIPPED.clear()


def pytest_collectreport(report):
    if report.skipped and report.nodeid.endswith(".py"):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        _SKIPPED[report.nodeid] = str(reason).removeprefix("Skipped: ")


def recorded() -> list[dict]:
    """The modules not run, for the results header: [{"module", "area", "reason"}]."""
    return [{"module": nodeid, "area": area_of(nodeid), "reason": reason} for nodeid, reason in _SKIPPED.items()]


def area_of(nodeid: str) -> str:
    """The area a suite module holds (conformance/suite/test_<area>.py)."""
    return Path(nodeid).stem.removeprefix("test_")


def pytest_terminal_summary(terminalreporter):
    for module in recorded():
        terminalreporter.line(f"area not run: {module['area']} ({module['module']}): {module['reason']}", yellow=True)
