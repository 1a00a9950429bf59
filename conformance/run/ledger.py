"""The bookkeeping of one supervised run, across the pytest processes it took (no processes here).

It merges what each attempt planned and recorded, adds the CRASH / TIMEOUT records the supervisor
decides for tests whose process died or ran out of time and the NOT-RUN records of tests it gave up
on, and assembles the results (final, or as they stand while the run goes on). ``died`` is the one
place the runner makes records itself. A test's first record stands: lanes run side by side, and one
may give up on a test (NOT RUN) while another was still running it.

It also keeps, per test file, the *streak*: the crashes and timeouts recorded in a row since the file's
last pass, from which the supervisor judges a file hopeless (``Limits.abandon_after``).
"""

from __future__ import annotations

from conformance.data.facts import Facts
from conformance.data.results import Record, Results

DEATHS = ("crash", "timeout")  # the statuses that lengthen a streak


def test_file(nodeid: str) -> str:
    """The test file a node id belongs to (one area of the suite per file)."""
    return nodeid.split("::", 1)[0]


class Ledger:
    def __init__(self):
        self.header: dict | None = None  # from the first plan: the environment of the run
        self.planned: dict[str, dict] = {}  # nodeid -> {"nodeid", the test's facts (as JSON), "slow"}, in run order
        self.records: dict[str, Record] = {}
        self.streaks: dict[str, list[str]] = {}  # test file -> the statuses of its crashes and timeouts in a row

    def plan(self, plan: dict) -> None:
        """Take in an attempt's plan; a later attempt's plan only ever adds tests."""
        if self.header is None and plan.get("header"):
            self.header = dict(plan["header"])
        for test in plan.get("tests", []):
            self.planned.setdefault(test["nodeid"], test)

    def record(self, event: dict) -> Record | None:
        """Take in a ``{"event": "record", ...}`` line of an attempt's stream; None if the test has a record already."""
        return self._add(Record.from_json({k: v for k, v in event.items() if k != "event"}, where="a record of the stream"))

    def died(self, nodeid: str, status: str, message: str, duration: float = 0.0) -> Record | None:
        """Record a test whose process died (``crash``) or was stopped (``timeout``) while it ran,
        or that never ran (``not_run``); None if the test has a record already."""
        return self._add(self._made(nodeid, status, message, duration))

    def remaining(self, file: str | None = None) -> list[str]:
        """Planned tests (of ``file``, or all) with no record yet, in run order."""
        return [nodeid for nodeid in self.planned
                if nodeid not in self.records and (file is None or test_file(nodeid) == file)]

    def close_remaining(self, why: str, file: str | None = None) -> list[Record]:
        """Give every test (of ``file``, or all) that will not run now a NOT-RUN record saying why."""
        return [self.died(nodeid, "not_run", why) for nodeid in self.remaining(file)]

    def streak(self, file: str) -> list[str]:
        """The statuses of the file's crashes and timeouts recorded in a row since its last pass."""
        return self.streaks.get(file, [])

    def results(self, unfinished: str | None = None, **header) -> Results:
        """Records in run order (tests pytest did not plan, if any, last) under the merged header. With
        ``unfinished`` (results written while the run goes on), tests with no record yet read NOT RUN with
        that message: should the run be cut short, the file written last still accounts for every test."""
        records = {**self.records}
        if unfinished is not None:
            records.update((nodeid, self._made(nodeid, "not_run", unfinished)) for nodeid in self.remaining())
        order = {nodeid: i for i, nodeid in enumerate(self.planned)}
        ordered = sorted(records.values(), key=lambda r: order.get(r.nodeid, len(order)))
        return Results(header={**(self.header or {}), **header}, records=ordered)

    def _made(self, nodeid: str, status: str, message: str, duration: float = 0.0) -> Record:
        test = self.planned.get(nodeid, {"clauses": [], "variant": None, "device": None})
        return Record(nodeid, Facts.from_json(test), status, message, round(duration, 3))

    def _add(self, record: Record) -> Record | None:
        if record.nodeid in self.records:
            return None
        self.records[record.nodeid] = record
        self._extend_streak(record)
        return record

    def _extend_streak(self, record: Record) -> None:
        file = test_file(record.nodeid)
        if record.status in DEATHS:
            self.streaks.setdefault(file, []).append(record.status)
        elif _shows_the_file_can_run(record):
            self.streaks.pop(file, None)


def _shows_the_file_can_run(record: Record) -> bool:
    """A test that ended as expected of it: a pass, or a failure declared (a deviation, a capability not
    claimed). It ends the file's streak: the implementation works there. An unexpected failure, an error or
    a skip neither ends nor lengthens it: an implementation that hangs in every backward still fails its
    forward checks quickly between the hangs, and a skip ran nothing."""
    return record.status == "pass" or (record.status == "fail" and record.expected is not None)
