"""Recording: turns pytest's per-phase reports into one :class:`~conformance.results.Record` per test.

A record keeps what happened (``status``) apart from what was expected (``expected``): the plugin
turns expectations into xfail marks, so pytest's own outcome (xfailed, strict XPASS) is translated
back into the plain status here. Works under pytest-xdist: the clause ids, variant, device and
expectation travel on ``report.user_properties`` (set at collection by the plugin), so the
controller needs no items. It does not import the plugin: the plugin hands it the header's source.
"""

from __future__ import annotations

import datetime
import json
import platform
import sys
from pathlib import Path
from typing import Callable

import conformance
from conformance.registry import level_of
from conformance.results import Expected, Record, Results, write_results

MESSAGE_LIMIT = 4000
STRICT_XPASS = "[XPASS(strict)]"  # pytest's longrepr for a strict xfail test that passed


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


def status_of(report) -> str:
    """What happened in one phase, with pytest's xfail bookkeeping taken back out."""
    if report.when != "call":
        return "error" if report.failed else "skip" if report.skipped else "pass"
    if hasattr(report, "wasxfail"):  # an expected failure: xfailed (it failed) or non-strict XPASS
        return "fail" if report.skipped else "pass"
    if report.failed and str(report.longrepr).startswith(STRICT_XPASS):
        return "pass"
    return "pass" if report.passed else "skip" if report.skipped else "fail"


class Recorder:
    """A pytest plugin object: streams start/record events and writes the results file at the end.

    ``header_fields`` gives the implementation-specific part of the header (the plugin's binding)."""

    def __init__(self, config, path, header_fields: Callable[[], dict]):
        self.config = config
        self.header_fields = header_fields
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
        status, message = status_of(report), _message(report)
        if report.when == "call" and status == "pass" and message.startswith(STRICT_XPASS):
            message = "the declared deviation did not occur (remove it from expectations.toml): " + message
        record = self.records.get(report.nodeid)
        if record is None:
            record = self.records[report.nodeid] = Record(
                report.nodeid, props["clauses"], props["variant"], props["device"], status,
                props.get("expected"), message)
        elif report.when == "call" or status == "error" and record.status == "pass":
            record.status, record.message = status, message
        if report.when == "call":  # the call may recharge the test: isolation's clause, a known breakage
            record.clauses = list(props["clauses"])
            record.level = level_of(record.clauses)
            record.notes = list(props.get("notes", ()))
            if props.get("expected"):
                record.expected = Expected(**props["expected"])
        record.duration += report.duration
        if report.when == "teardown":
            self._emit({"event": "record", **_as_json(record)})

    def pytest_sessionfinish(self, session, exitstatus):
        self.stream.close()
        write_results(self.path, Results(header=self.header(int(exitstatus)), records=list(self.records.values())))

    def header(self, exitstatus: int) -> dict:
        import hypothesis
        import torch

        current = hypothesis.settings()
        return {
            **self.header_fields(),
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


def _as_json(record: Record) -> dict:
    return Results(header={}, records=[record]).to_json()["records"][0]


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
