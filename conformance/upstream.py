"""A failure that a known upstream bug explains says so (``[[known_upstream]]`` in expectations.toml).

An implementation built on torch inherits torch's bugs: its failure of, say, the rrelu sweep test is
torch's pytorch/pytorch#193671. The failure stays a failure (for torch itself it is a declared
deviation); its message gains a line naming the bug, so the implementer sees it instead of hunting.

Registered by conformance/plugin.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import expectations
from conformance.recording import item_param

KNOWN = pytest.StashKey[list]()  # the known upstream bugs, loaded (and checked) by the plugin with the expectations


def load(config) -> None:
    config.stash[KNOWN] = expectations.load_known_upstream(Path(config.getoption("expectations")))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when != "call" or not report.failed:
        return report
    clauses = dict(item.user_properties).get("clauses", ())
    notes = [bug.note for bug in item.config.stash.get(KNOWN, [])
             if bug.explains(nodeid=item.nodeid, clauses=clauses, variant=item_param(item, "variant"))]
    if notes:
        crash = getattr(report.longrepr, "reprcrash", None)
        if crash is not None:  # the line the summary, the results file and the report show
            crash.message = "\n".join([crash.message, *notes])
        report.sections.append(("known upstream bug", "\n".join(notes)))
    return report
