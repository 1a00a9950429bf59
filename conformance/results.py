"""The machine-readable results of one run: a header and one record per test.

This module is the contract between recording (conformance/recording.py, pytest side) and
rendering (conformance/report/, which knows nothing about pytest). It imports neither.

File format (JSON)::

    {"schema": 1,
     "header": {"implementation", "implementation_version", "torch", "python", "platform",
                "device", "variant", "harness", "hypothesis", "started", "finished", "exit",
                "supervisor" (only from ``python -m conformance run``: attempts, limits, log)},
     "records": [{"nodeid", "clauses": [...], "variant", "device", "outcome", "message",
                  "duration"}, ...]}

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

SCHEMA = 1

# Every verdict a record can carry. The first seven are the report's cell verdicts.
OUTCOMES = (
    "pass",
    "fail",  # the implementation violated the clause (or an expected deviation stopped happening)
    "expected_deviation",  # a declared, known deviation (expectations.toml) happened
    "unsupported",  # the implementation does not claim what the test needs, and it failed
    "crash",  # the process died during the test
    "timeout",  # the test did not finish in time
    "skip",  # not applicable here (e.g. CUDA absent); the message says why
    "unclaimed_pass",  # the implementation does not claim it, yet the test passed
    "error",  # the test could not run (fixture/setup failure): a harness or adapter problem
    "not_run",  # the runner gave up before the test started (whole-run bound, a run process that kept dying)
)


@dataclass
class Record:
    nodeid: str
    clauses: list[str]
    variant: str | None
    device: str | None
    outcome: str
    message: str = ""
    duration: float = 0.0

    def __post_init__(self):
        if self.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {self.outcome!r}")


@dataclass
class Results:
    header: dict
    records: list[Record] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"schema": SCHEMA, "header": self.header, "records": [asdict(r) for r in self.records]}

    @classmethod
    def from_json(cls, data: dict) -> "Results":
        if data.get("schema") != SCHEMA:
            raise ValueError(f"unsupported results schema {data.get('schema')!r} (expected {SCHEMA})")
        return cls(header=data["header"], records=[Record(**r) for r in data["records"]])


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
