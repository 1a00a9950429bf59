"""The machine-readable results of one run: a header and one record per test.

This module is the contract between recording (conformance/plugin/recording.py, pytest side), the runner
(conformance/run/) and rendering (conformance/report/, which knows nothing about pytest). It imports
none of them.

File format (JSON), schema 5: :data:`ResultsFile` below is the model, checked at the door when a file is read
(conformance/data/datafiles.py: an unknown key fails, naming the file, the record and the field), and
``conformance/data/results.schema.json`` its published JSON Schema (tests/unit/test_datafiles.py keeps the two equal and checks
a real run's file against it). In short: ``{"schema": 5, "header": {...what ran, on what, with which options...},
"records": [{"nodeid", the test's facts (conformance/data/facts.py), "status", "message", "duration"}, ...]}``.

A record's verdict is derived, never stored: :func:`conformance.data.vocabulary.verdict` of its status,
expected kind and level. So results can be judged again against another expectations file without
re-running (``python -m conformance report --expectations FILE``). Schemas 2 to 4 are read by the same model (each
added fields; schema 4 files may lack what 5 documents); schema 1 files (one ``outcome`` field that mixed status and
expectation) are converted first.

A streaming companion (``<results>.jsonl``, one JSON object a line, flushed per line) has
``{"event": "start", "nodeid": ...}`` before each test and ``{"event": "record", ...record}``
after it, so that a supervisor can tell which test a crashed or hung process was running.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import tempfile
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12

from pydantic import create_model, with_config

from conformance.data.datafiles import FORBID, DataFileError, schema, validated
from conformance.data.facts import Expected, Facts, UpstreamBug
from conformance.data.registry import level_of
from conformance.data.vocabulary import DEVICES, FEATURES, STATUSES, VARIANTS, verdict


def now() -> str:
    """A results header's time: UTC, to the second, ISO 8601."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


__all__ = ["Expected", "Facts", "UpstreamBug", "Record", "Results", "SCHEMA", "read_results", "write_results"]

SCHEMA = 5
READABLE = (2, 3, 4, SCHEMA)  # read by ResultsFile; schema 1 is converted first


# ---- the file's model (its JSON Schema: conformance/data/results.schema.json)

@with_config(FORBID)
class CapabilitiesJSON(TypedDict, total=False):
    """What the implementation claims (conformance/data/capabilities.py)."""

    source: Literal["declared", "declared in part", "inferred"]
    declared: list[str]  # the keys it declared; the others were inferred
    variants: list[Literal[VARIANTS]]
    features: list[Literal[tuple(FEATURES)]]
    devices: list[Literal[DEVICES]]
    not_provided: dict[str, str]  # a feature inferred absent -> the optional name the module lacks


@with_config(FORBID)
class HypothesisJSON(TypedDict):
    version: str
    profile: str | None
    max_examples: int
    derandomize: bool


@with_config(FORBID)
class ModuleNotRun(TypedDict):
    module: str
    area: str
    reason: str


@with_config(FORBID)
class SupervisorJSON(TypedDict, total=False):
    """How ``python -m conformance run`` supervised the run (absent from a plain pytest run's file)."""

    attempts: int
    test_timeout_s: float
    cut_timeout_s: float
    slow_timeout_s: float
    slow_cut_timeout_s: float
    cut_after_timeouts: int
    abandon_after: int
    lanes: int
    run_timeout_s: float
    timeout_method: str
    seconds: float
    log: str  # the run's log, beside the results file
    collection_errors: list[str]


@with_config(FORBID)
class Header(TypedDict, total=False):
    """What ran, on what, with which options, and how it ended."""

    implementation: str  # its canonical id (conformance/data/ids.py)
    implementation_name: str
    implementation_module: str
    implementation_version: str
    capabilities: CapabilitiesJSON
    strict_levels: bool
    modules_not_run: list[ModuleNotRun]  # whole areas that skipped at collection, and why
    torch: str
    cuda_available: bool
    python: str
    platform: str
    variant: Literal[(*VARIANTS, "both")]
    device: Literal[DEVICES] | Literal["all"]
    harness: str
    hypothesis: HypothesisJSON
    started: str  # UTC, ISO 8601
    finished: str | None  # None while the run goes on
    exit: int | None  # pytest's exit status; None while the run goes on
    supervisor: SupervisorJSON


# A record as the file writes it: the test's facts (every field of conformance/data/facts.py's Facts, written once there)
# flat beside what happened to it.
_FACTS = typing.get_type_hints(Facts)
RecordJSON = create_model(
    "Record", __config__=FORBID, nodeid=(str, ...),
    **{f.name: (_FACTS[f.name], ... if f.default is dataclasses.MISSING else f.default) for f in dataclasses.fields(Facts)},
    status=(Literal[STATUSES], ...), message=(str, ""), duration=(float, 0.0))


@with_config(FORBID)
class ResultsFile(TypedDict):
    schema: Literal[READABLE]
    header: Header
    records: list[RecordJSON]


SCHEMA_PATH = Path(__file__).with_name("results.schema.json")  # `python -m conformance schema` writes it


def json_schema() -> dict:
    """The published JSON Schema of a results file (:data:`ResultsFile`)."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Activation-checkpointing conformance "
            f"results, schema {SCHEMA}", **schema(ResultsFile)}


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
    def from_json(cls, data: dict, *, where: str = "a results record") -> "Record":
        """A record from its JSON, checked at the door (an unknown key fails, naming ``where`` and the field)."""
        return cls._of(validated(RecordJSON, data, where=where))

    @classmethod
    def _of(cls, data) -> "Record":
        facts = Facts(**{f.name: getattr(data, f.name) for f in dataclasses.fields(Facts)})
        if facts.level is None:  # schemas 1 and 2 wrote no level: their clauses', as the judge derives it
            facts = dataclasses.replace(facts, level=level_of(facts.clauses))
        return cls(data.nodeid, facts, data.status, data.message, data.duration)


@dataclass
class Results:
    header: dict
    records: list[Record] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"schema": SCHEMA, "header": self.header, "records": [r.to_json() for r in self.records]}

    @classmethod
    def from_json(cls, data: dict, *, where: str = "results") -> "Results":
        """Results from a file's JSON, checked at the door against :data:`ResultsFile`."""
        schema = data.get("schema") if isinstance(data, dict) else None
        if schema == 1:
            data = {**data, "schema": 2, "records": [_from_schema_1(r) for r in data["records"]]}
        elif schema not in READABLE:
            raise DataFileError(f"{where}: results schema {schema!r} is not supported (this harness reads schemas 1 to "
                                f"{SCHEMA})")
        read = validated(ResultsFile, data, where=where)
        return cls(header=read["header"], records=[Record._of(r) for r in read["records"]])


# Schema 1 kept one `outcome`: a status, or a verdict that folded the expectation in.
_SCHEMA_1 = {
    "expected_deviation": ("fail", "deviation"),
    "unsupported": ("fail", "unsupported"),
    "unclaimed_pass": ("pass", "unsupported"),
}
_STALE_PREFIX = "expected deviation did not occur"


def _from_schema_1(data: dict) -> dict:
    data = dict(data)
    outcome, message = data.pop("outcome"), data.get("message", "")
    status, kind = _SCHEMA_1.get(outcome, (outcome, None))
    if outcome == "fail" and message.startswith(_STALE_PREFIX):  # schema 1's "fail" for a vanished deviation
        status, kind = "pass", "deviation"
    return {**data, "status": status, "expected": {"kind": kind, "reason": "(recorded by schema 1)"} if kind else None}


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
        return Results.from_json(json.load(f), where=str(path))
