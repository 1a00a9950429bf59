"""Recording: turns pytest's per-phase reports into one :class:`~conformance.results.Record` per test.

Works under pytest-xdist: the clause ids, variant, device and expected verdict travel on
``report.user_properties`` (set at collection by the plugin), so the controller needs no items.
"""

from __future__ import annotations

import datetime
import json
import platform
import sys
from pathlib import Path

import conformance
from conformance.results import Record, Results, write_results

MESSAGE_LIMIT = 4000


def clause_ids_of(node) -> list[str]:
    return [cid for mark in node.iter_markers("clause") for cid in mark.args]


def item_param(item, name):
    callspec = getattr(item, "callspec", None)
    return callspec.params.get(name) if callspec else None


def _message(report) -> str:
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple):  # skip: (path, lineno, reason)
        text = str(longrepr[2])
    elif getattr(longrepr, "reprcrash", None) is not None:
        text = longrepr.reprcrash.message
    else:
        text = str(longrepr)
    return text.removeprefix("Skipped: ")[:MESSAGE_LIMIT]


def outcome_of(report, expected: str | None) -> str:
    """The verdict of one phase report; ``expected`` is the plugin's xfail kind, if any."""
    if report.when != "call":
        if report.failed:
            return "error"
        return "skip" if report.skipped else "pass"
    if hasattr(report, "wasxfail"):
        return "unclaimed_pass" if report.passed else (expected or "expected_deviation")
    if report.passed:
        return "pass"
    return "skip" if report.skipped else "fail"


class Recorder:
    """A pytest plugin object: streams start/record events and writes the results file at the end."""

    def __init__(self, config, path):
        self.config = config
        self.path = Path(path)
        self.stream_path = self.path.with_suffix(".jsonl")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.stream = open(self.stream_path, "w", encoding="utf-8")
        self.records: dict[str, Record] = {}
        self.started = _now()

    def _emit(self, event: dict) -> None:
        self.stream.write(json.dumps(event) + "\n")
        self.stream.flush()

    def pytest_runtest_logstart(self, nodeid, location):
        self._emit({"event": "start", "nodeid": nodeid})

    def pytest_runtest_logreport(self, report):
        props = dict(report.user_properties)
        if "clauses" not in props:
            return  # not a conformance test
        outcome = outcome_of(report, props.get("expected"))
        message = _message(report)
        if outcome == "fail" and message.startswith("[XPASS(strict)]"):
            message = "expected deviation did not occur (remove it from expectations.toml): " + message
        record = self.records.get(report.nodeid)
        if record is None:
            record = self.records[report.nodeid] = Record(
                report.nodeid, props["clauses"], props.get("variant"), props.get("device"), outcome, message
            )
        elif report.when == "call" or outcome == "error" and record.outcome == "pass":
            record.outcome, record.message = outcome, message
        record.duration += report.duration
        if report.when == "teardown":
            self._emit({"event": "record", **record.__dict__})

    def pytest_sessionfinish(self, session, exitstatus):
        self.stream.close()
        write_results(self.path, Results(header=self.header(int(exitstatus)), records=list(self.records.values())))

    def header(self, exitstatus: int) -> dict:
        from conformance.plugin import implementation  # the plugin owns the binding

        import hypothesis
        import torch

        impl = implementation(self.config)
        current = hypothesis.settings()
        return {
            "implementation": impl.name,
            "implementation_module": impl.module.__name__,
            "implementation_version": impl.version,
            "capabilities_declared": impl.capabilities.declared,
            "torch": torch.__version__,
            "cuda_available": torch.cuda.is_available(),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "variant": self.config.getoption("variant"),
            "device": self.config.getoption("device"),
            "harness": conformance.__version__,
            "hypothesis": {
                "version": hypothesis.__version__,
                "profile": getattr(hypothesis.settings, "_current_profile", None),
                "max_examples": current.max_examples,
                "derandomize": current.derandomize,
            },
            "started": self.started,
            "finished": _now(),
            "exit": exitstatus,
        }


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
