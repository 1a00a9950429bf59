"""The machine-readable results of one run: a header and one record per test.

This module is the contract between recording (conformance/recording.py, pytest side), the runner
(conformance/run/) and rendering (conformance/report/, which knows nothing about pytest). It imports
none of them.

File format (JSON), schema 4::

    {"schema": 4,
     "header": {"implementation" (the canonical id), "implementation_name", "implementation_module",
                "implementation_version", "capabilities": {"source", "variants", "features",
                "devices", "not_provided"}, "torch", "python", "platform", "device", "variant",
                "harness", "hypothesis", "started", "finished", "exit",
                "supervisor" (only from ``python -m conformance run``: attempts, limits, log)},
     "records": [{"nodeid", the test's facts (conformance/facts.py: "clauses": [...] it is charged to, "variant",
                  "device", "level": the level it is held to, the strictest of its clauses' (MUST, SHOULD, MAY,
                  OBSERVED): a failure binds only at MUST, "expected": null (expected to pass) or {"kind":
                  "deviation" | "unsupported", "reason"}, "notes": [what the implementation noted while it ran],
                  "upstream": null or the known upstream bug its failure matches {"bug", "url", "summary"},
                  "reproducer": null or a standalone script reproducing its failure, relative to this file),
                  "status": what happened (vocabulary.STATUSES), "message", "duration"}, ...]}

A record's verdict is derived, never stored: :func:`conformance.vocabulary.verdict` of its status,
expected kind and level. So results can be judged again against another expectations file without
re-running (``python -m conformance report --expectations FILE``). Schema 2 files (no ``level``) take
it from this harness's clause registry, schema 3 files have no ``upstream`` nor ``reproducer``; schema 1 files (one ``outcome`` field that mixed status and
expectation) are read and converted.

A streaming companion (``<results>.jsonl``, one JSON object a line, flushed per line) has
``{"event": "start", "nodeid": ...}`` before each test and ``{"event": "record", ...record}``
after it, so that a supervisor can tell which test a crashed or hung process was running.
"""

from __future__ import annotations

import datetime
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from conformance.facts import Expected, Facts, KnownBug
from conformance.vocabulary import STATUSES, verdict


def now() -> str:
    """A results header's time: UTC, to the second, ISO 8601."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


__all__ = ["Expected", "Facts", "KnownBug", "Record", "Results", "SCHEMA", "read_results", "write_results"]

SCHEMA = 4


@dataclass
class Record:
    """One test's facts and what happened to it."""

    nodeid: str
    facts: Facts
    status: str
    message: str = ""
    duration: float = 0.0

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")

    clauses = property(lambda self: list(self.facts.clauses))
    variant = property(lambda self: self.facts.variant)
    device = property(lambda self: self.facts.device)
    level = property(lambda self: self.facts.level)
    expected = property(lambda self: self.facts.expected)
    notes = property(lambda self: list(self.facts.notes))
    upstream = property(lambda self: self.facts.upstream)
    reproducer = property(lambda self: self.facts.reproducer)

    @property
    def verdict(self) -> str:
        return verdict(self.status, self.expected.kind if self.expected else None, self.level)

    def to_json(self) -> dict:
        return {"nodeid": self.nodeid, **self.facts.to_json(), "status": self.status, "message": self.message,
                "duration": self.duration}

    @classmethod
    def from_json(cls, data: dict) -> "Record":
        return cls(data["nodeid"], Facts.from_json(data), data["status"], data.get("message", ""),
                   data.get("duration", 0.0))


@dataclass
class Results:
    header: dict
    records: list[Record] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"schema": SCHEMA, "header": self.header, "records": [r.to_json() for r in self.records]}

    @classmethod
    def from_json(cls, data: dict) -> "Results":
        schema = data.get("schema")
        if schema == 1:
            return cls(header=data["header"], records=[_from_schema_1(r) for r in data["records"]])
        if schema not in (2, 3, SCHEMA):
            raise ValueError(f"results schema {schema!r} is not supported (this harness reads schemas 1 to {SCHEMA})")
        return cls(header=data["header"], records=[Record.from_json(r) for r in data["records"]])


# Schema 1 kept one `outcome`: a status, or a verdict that folded the expectation in.
_SCHEMA_1 = {
    "expected_deviation": ("fail", "deviation"),
    "unsupported": ("fail", "unsupported"),
    "unclaimed_pass": ("pass", "unsupported"),
}
_STALE_PREFIX = "expected deviation did not occur"


def _from_schema_1(data: dict) -> Record:
    data = dict(data)
    outcome, message = data.pop("outcome"), data.get("message", "")
    status, kind = _SCHEMA_1.get(outcome, (outcome, None))
    if outcome == "fail" and message.startswith(_STALE_PREFIX):  # schema 1's "fail" for a vanished deviation
        status, kind = "pass", "deviation"
    return Record.from_json({**data, "status": status, "expected": Expected(kind, "(recorded by schema 1)") if kind else None})


def write_atomically(path: str | os.PathLike, text: str) -> None:
    """Write text so that readers see either the old file or the whole new one, never a part."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes it private; give it an ordinary file's mode
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it is to set it: do it once, at import, before any thread
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def write_results(path: str | os.PathLike, results: Results) -> None:
    write_atomically(path, json.dumps(results.to_json(), indent=1, sort_keys=False) + "\n")


def read_results(path: str | os.PathLike) -> Results:
    with open(path, encoding="utf-8") as f:
        return Results.from_json(json.load(f))
