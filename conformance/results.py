"""The machine-readable results of one run: a header and one record per test.

This module is the contract between recording (conformance/recording.py, pytest side), the runner
(conformance/run/) and rendering (conformance/report/, which knows nothing about pytest). It imports
none of them.

File format (JSON), schema 3::

    {"schema": 2,
     "header": {"implementation" (the canonical id), "implementation_name", "implementation_module",
                "implementation_version", "capabilities": {"source", "variants", "features",
                "devices", "not_provided"}, "torch", "python", "platform", "device", "variant",
                "harness", "hypothesis", "started", "finished", "exit",
                "supervisor" (only from ``python -m conformance run``: attempts, limits, log)},
     "records": [{"nodeid", "clauses": [...], "variant", "device",
                  "status": what happened (vocabulary.STATUSES),
                  "expected": null (expected to pass) or {"kind": "deviation" | "unsupported", "reason"},
                  "message", "duration", "notes": [what the implementation noted while it ran],
                  "level": the level the test is held to, the strictest of its clauses' (MUST, SHOULD, MAY,
                           OBSERVED): a failure binds only at MUST}, ...]}

A record's verdict is derived, never stored: :func:`conformance.vocabulary.verdict` of its status,
expected kind and level. So results can be judged again against another expectations file without
re-running (``python -m conformance report --expectations FILE``). Schema 2 files (no ``level``) take
it from this harness's clause registry; schema 1 files (one ``outcome`` field that mixed status and
expectation) are read and converted.

A streaming companion (``<results>.jsonl``, one JSON object a line, flushed per line) has
``{"event": "start", "nodeid": ...}`` before each test and ``{"event": "record", ...record}``
after it, so that a supervisor can tell which test a crashed or hung process was running.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from conformance.registry import level_of
from conformance.vocabulary import EXPECTED_KINDS, STATUSES, verdict

SCHEMA = 3


@dataclass(frozen=True)
class Expected:
    """Why a test is not simply expected to pass."""

    kind: str  # vocabulary.EXPECTED_KINDS
    reason: str

    def __post_init__(self):
        if self.kind not in EXPECTED_KINDS:
            raise ValueError(f"unknown expectation kind {self.kind!r}")


@dataclass
class Record:
    nodeid: str
    clauses: list[str]
    variant: str | None
    device: str | None
    status: str
    expected: Expected | None = None
    message: str = ""
    duration: float = 0.0
    notes: list[str] = field(default_factory=list)  # what the implementation noted while the test ran (its
    # optional conformance_notes(), docs/IMPLEMENTING.md), e.g. a compiled row's graph breaks: that part ran eagerly
    level: str | None = None  # the strictest level of its clauses; None: read from the clause registry

    def __post_init__(self):
        if isinstance(self.expected, dict):
            self.expected = Expected(**self.expected)
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")
        if self.level is None:
            self.level = level_of(self.clauses)

    @property
    def verdict(self) -> str:
        return verdict(self.status, self.expected.kind if self.expected else None, self.level)


@dataclass
class Results:
    header: dict
    records: list[Record] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"schema": SCHEMA, "header": self.header, "records": [asdict(r) for r in self.records]}

    @classmethod
    def from_json(cls, data: dict) -> "Results":
        schema = data.get("schema")
        if schema == 1:
            return cls(header=data["header"], records=[_from_schema_1(r) for r in data["records"]])
        if schema not in (2, SCHEMA):
            raise ValueError(f"results schema {schema!r} is not supported (this harness reads schemas 1 to {SCHEMA})")
        return cls(header=data["header"], records=[Record(**r) for r in data["records"]])


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
    return Record(**data, status=status, expected=Expected(kind, "(recorded by schema 1)") if kind else None)


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
