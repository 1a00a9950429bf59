"""Recording: turns pytest's per-phase reports into one :class:`~conformance.data.results.Record` per test.

A record keeps what happened (``status``) apart from what was expected (``expected``). Both are the judge's
(conformance/plugin/judging.py), decided once before it gave pytest the outcome that says what a result means (xfailed,
strict XPASS): the status it read from the report as pytest made it travels on the report (``facts.status``), the
test's facts as judged (conformance/data/facts.py), which it writes onto each report, on ``report.user_properties``;
both work under pytest-xdist, whose controller has no items. This module only writes them. It does not import the plugin: the plugin hands it
the header's source.
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path
from typing import Callable

import conformance
from conformance.data import facts
from conformance.plugin import options
from conformance.data.results import Record, Results, now, write_results

MESSAGE_LIMIT = 4000


def message_of(report) -> str:
    """The message of one phase's report: the exception (no traceback), or a skip's reason."""
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


class Recorder:
    """A pytest plugin object: the session's records, one per test (:attr:`records`, where staleness is judged from:
    conformance/plugin/staleness.py); with a ``path``, it streams start/record events beside it and writes the
    results file there at the end.

    ``header`` gives the header of the run, less its times and exit status (the plugin's binding)."""

    def __init__(self, config, path, header: Callable[[], dict]):
        self.config = config
        self.run_header = header
        self.path = Path(path) if path else None
        self.stream = None
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.stream = open(self.path.with_suffix(".jsonl"), "w", encoding="utf-8")
        self.records: dict[str, Record] = {}
        self.started = now()

    def _emit(self, event: dict) -> None:
        if self.stream:
            self.stream.write(json.dumps(event) + "\n")
            self.stream.flush()

    def pytest_runtest_logstart(self, nodeid, location):
        self._emit({"event": "start", "nodeid": nodeid})

    def pytest_runtest_logreport(self, report):
        test = facts.read(report)
        if test is None:
            return  # not a conformance test
        status, message = facts.status(report), message_of(report)
        record = self.records.get(report.nodeid)
        if record is None:
            record = self.records[report.nodeid] = Record(report.nodeid, test, status, message)
        elif report.when == "call" or status == "error" and record.status == "pass":
            record.status, record.message = status, message
        if report.when == "call":  # as judged: the clauses its result is charged to, what was expected, notes
            record.facts = test
        record.duration += report.duration
        if report.when == "teardown":
            self._emit({"event": "record", **record.to_json()})

    def pytest_sessionfinish(self, session, exitstatus):
        if self.path:
            self.stream.close()
            header = {**self.run_header(), "started": self.started, "finished": now(), "exit": int(exitstatus)}
            write_results(self.path, Results(header=header, records=list(self.records.values())))


def environment(config) -> dict:
    """The part of a results header that says what the run ran on and with which options."""
    import hypothesis
    import torch

    current = hypothesis.settings()
    return {
        "torch": torch.__version__,
        "cuda_available": torch.cuda.is_available(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "variant": config.getoption("variant"),
        "device": "all" if len(devices := options.devices(config.getoption("device"))) > 1 else devices[0],
        "harness": conformance.__version__,
        "hypothesis": {
            "version": hypothesis.__version__,
            "profile": hypothesis.settings.get_current_profile_name(),
            "max_examples": current.max_examples,
            "derandomize": current.derandomize,
        },
    }
