"""The judge: what each test's result means, decided once, for pytest's outcome, its exit status and the
results file alike.

A pytest plugin object the plugin registers (conformance/plugin/__init__.py). At collection it gives every test
its facts (conformance/data/facts.py) with what is planned for it; once the test has run, it judges the result
by the clauses the result is charged to (:func:`conformance.data.expectations.judge`: a sweep's failure is
charged to the check that failed, so an unclaimed feature of another clause of the test cannot turn it
into "unsupported"), stores what happened (the status, read before anything is changed) and the judged facts on the
report, which the recorder only writes, and then gives pytest the outcome that says so:

- a failure expected of the test (a declared deviation, a capability not claimed, a row's breakage) is an
  expected failure (pytest's xfailed), as is a failure of a clause that does not bind (SHOULD, MAY,
  OBSERVED: conformance/plugin/not_binding.py names it) unless ``--strict-levels``;
- a pass where a deviation is declared fails (a strict xfail that passed: remove the entry), a pass of a
  capability not claimed is pytest's XPASS;
- a failure a known upstream bug explains names the bug (a field of the record, and a line of its message).

Whether a declaration went stale is judged from the records of the whole run (conformance/plugin/staleness.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import pytest
import torch

from conformance.data import expectations, facts
from conformance.plugin.binding import Implementation
from conformance.data.causes import causes_of
from conformance.data.facts import Facts
from conformance.data.ids import suite_nodeid
from conformance.data.vocabulary import BINDING_LEVEL, VERDICTS, release_of, verdict


class Judge:
    """``implementation`` and ``load`` are called at the first collection of conformance tests (a pytest run
    of the harness's own self-tests never loads an implementation)."""

    def __init__(self, config, implementation: Callable[[], Implementation],
                 load: Callable[[], expectations.Expectations]):
        self.config, self._implementation, self._load = config, implementation, load
        self.impl: Implementation | None = None
        self.expectations: expectations.Expectations | None = None

    def plan(self, item, clause_ids, variant, device) -> None:
        """Give a collected test its facts, with what is expected of it should it fail in its own setup or
        die (the expectation of all its clauses: nothing is charged yet)."""
        if self.impl is None:
            self.impl, self.expectations = self._implementation(), self._load()
        facts.write(item, self._judge(Facts(tuple(clause_ids), variant, device), _nodeid(item), "pass"))

    def _judge(self, test: Facts, nodeid: str, status: str) -> Facts:
        return expectations.judge(test, nodeid=nodeid, status=status, impl=self.impl.id,
                                  capabilities=self.impl.capabilities, torch_release=release_of(torch.__version__),
                                  expectations=self.expectations)

    @pytest.hookimpl(wrapper=True, tryfirst=True)  # the outermost wrapper: it sees the report as pytest made it
    def pytest_runtest_makereport(self, item, call):
        """Judge the phase's report once: what happened (its status, on the report for the recorder), then what it
        means, given to pytest as its outcome."""
        report = yield
        test = facts.read(item)
        if test is None:
            return report
        facts.write(report, test)  # once per report, as the item holds them now (the call's are judged below)
        setattr(report, facts.STATUS, _status(report))
        if report.skipped:
            return report
        if report.when != "call":  # a setup failure of a test expected to fail is an expected failure too
            if report.failed and test.expected is not None:
                # recorded as pytest shows it, a skip (the call never ran): its verdict says nothing of the clause
                setattr(report, facts.STATUS, "skip")
                report.outcome, report.wasxfail = "skipped", _reason(test.expected)
            return report
        if report.failed:  # what the failure looks like: what a declaration must match to explain it
            test = replace(test, causes=causes_of(call.excinfo.value if call.excinfo else None))
        judged = self._judge(test, _nodeid(item), "fail" if report.failed else "pass")
        facts.write(item, judged)  # the teardown's report carries them too
        facts.write(report, judged)
        if report.failed:
            _fail(report, judged, strict_levels=self.config.getoption("strict_levels"),
                  mismatch=expectations.mismatch(judged, nodeid=_nodeid(item), impl=self.impl.id,
                                                 torch_release=release_of(torch.__version__),
                                                 expectations=self.expectations))
        elif judged.expected is not None:
            _pass(report, judged.expected)
        return report


# pytest's longrepr of a strict xfail test that passed: how a declared deviation that did not occur fails the run
STRICT_XPASS = "[XPASS(strict)]"


def _status(report) -> str:
    """What happened in one phase, read from the report as pytest made it, before any judgement."""
    if report.when != "call":
        return "error" if report.failed else "skip" if report.skipped else "pass"
    if hasattr(report, "wasxfail"):  # pytest's own xfail mark, applied inside this wrapper: xfailed or XPASS
        return "fail" if report.skipped else "pass"
    return "fail" if report.failed else "skip" if report.skipped else "pass"


def _nodeid(item) -> str:
    """The id the declarations match a test by: the checkout's, wherever the suite was collected from."""
    return suite_nodeid(item.nodeid, item.path)


def _reason(expected) -> str:
    return f"{'expected deviation' if expected.kind == 'deviation' else 'unsupported'}: {expected.reason}"


def _fail(report, judged: Facts, *, strict_levels: bool, mismatch: str | None = None) -> None:
    for title, line in (("known upstream bug", judged.upstream and judged.upstream.note),
                        ("a declaration covers this test, not this failure", mismatch)):
        if line:
            crash = getattr(report.longrepr, "reprcrash", None)
            if crash is not None:  # the line the summary, the results file and the report show
                crash.message = "\n".join([crash.message, line])
            report.sections.append((title, line))
    if judged.expected is not None:
        report.outcome, report.wasxfail = "skipped", _reason(judged.expected)
    elif judged.level != BINDING_LEVEL and not strict_levels:
        # pytest's own way to keep a failure out of the exit status: an expected failure. The results
        # recorder reads it back as status "fail"; the level makes its verdict (conformance/plugin/not_binding.py).
        label = VERDICTS[verdict("fail", None, judged.level)].label
        report.outcome = "skipped"
        report.wasxfail = f"{judged.level} clause: {label}, not a failure (--strict-levels makes it one)"


def _pass(report, expected) -> None:
    if expected.kind == "deviation":  # as pytest's strict xfail: a declared deviation that did not occur fails
        report.outcome = "failed"
        report.longrepr = (f"the declared deviation did not occur (remove it from expectations.toml): {STRICT_XPASS} "
                           f"{_reason(expected)}")
    else:  # a capability not claimed, yet it works: pytest's XPASS
        report.wasxfail = _reason(expected)
