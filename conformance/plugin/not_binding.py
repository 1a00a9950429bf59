"""Only a MUST binds: a failing test of a SHOULD, MAY or OBSERVED clause does not fail the run.

The docs make MUST clauses binding; SHOULD and MAY only recommend, and an OBSERVED clause records what
torch does where the docs are silent. So an implementation that behaves like torch where the docs allow
it passes the run. A test is held to the strictest level among the clauses its failure is charged to
(the ``level`` of its facts, which the judge, conformance/plugin/judging.py, derives from the clauses the sweeps
and the isolation hook narrow to the check that failed): below MUST, the judge keeps its failure out of
pytest's exit status, and this module names it with a verdict of its own (vocabulary.py: "SHOULD unmet",
"differs from torch"), in pytest's summary line; conformance/plugin/failure_summary.py lists them apart.
``--strict-levels`` holds every clause to MUST: such failures then fail the run.

Registered by conformance/plugin/__init__.py.
"""

from __future__ import annotations

import pytest

from conformance.data import facts
from conformance.data.vocabulary import BINDING_LEVEL, VERDICTS, verdict


def _not_binding(report) -> str | None:
    """The level of a failure that does not bind (None: the report is no such failure)."""
    if report.when != "call" or facts.status(report) != "fail":
        return None
    test = facts.read(report)
    return test.level if test and test.expected is None and test.level != BINDING_LEVEL else None


def _look(level: str):
    return VERDICTS[verdict("fail", None, level)]


@pytest.hookimpl(tryfirst=True)  # before pytest's own xfail status
def pytest_report_teststatus(report, config):
    level = None if config.getoption("strict_levels") else _not_binding(report)
    if level:
        look = _look(level)
        return look.label, look.progress, look.label.upper()
    return None
