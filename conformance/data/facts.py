"""The facts of one conformance test: what it is charged to, where it runs, what is expected of it.

One frozen :class:`Facts` per test, built by the plugin at collection from the test's clause marks and
parameters (conformance/plugin/judging.py), replaced (never edited) while the test runs (a sweep or the
isolation hook charges its failure to the clause that failed, the implementation notes something, the
judge settles the expectation). On the test item it is the object itself; the judge writes it once onto each of the
test's reports, as JSON data on pytest's ``user_properties`` under one key, :data:`KEY` (pytest-xdist sends reports
between processes as JSON), where the hook modules and the results recorder read it;
:class:`conformance.data.results.Record` is a test's facts plus what happened.

Plain data: it imports the vocabulary and the causes only; the level is the judge's to derive (it reads the registry).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from conformance.data.causes import Cause
from conformance.data.datafiles import FORBID
from conformance.data.vocabulary import EXPECTED_KINDS

KEY = "conformance"  # the one user_properties key of the harness: a report's facts
ATTRIBUTE = "_conformance_facts"  # a test item's facts, the object itself
STATUS = "conformance_status"  # the report attribute the judge writes what happened in its phase to (judging.py)


@dataclass(frozen=True)
class Expected:
    """Why a test is not simply expected to pass."""

    __pydantic_config__ = FORBID  # read at the door with a results file (conformance/data/results.py)
    kind: str  # vocabulary.EXPECTED_KINDS
    reason: str

    def __post_init__(self):
        if self.kind not in EXPECTED_KINDS:
            raise ValueError(f"unknown expectation kind {self.kind!r}")


@dataclass(frozen=True)
class UpstreamBug:
    """A bug of an upstream project (torch) that explains a failure (``[[known_upstream]]``, expectations.toml)."""

    __pydantic_config__ = FORBID
    bug: str  # "owner/repo#N"; for one this project found and has not reported yet, a name saying so
    url: str
    summary: str  # what goes wrong, in a sentence

    @property
    def note(self) -> str:
        return f"this failure matches a known upstream bug, {self.bug} ({self.url}): {self.summary}"


@dataclass(frozen=True)
class Facts:
    clauses: tuple[str, ...]  # what the test checks; while it runs, narrowed to what its failure is charged to
    variant: str | None
    device: str | None
    level: str | None = None  # the level it is held to, the strictest of its clauses' (expectations.judge; None: not judged)
    expected: Expected | None = None  # None: expected to pass
    notes: tuple[str, ...] = ()  # what the implementation noted while the test ran (docs/IMPLEMENTING.md)
    upstream: UpstreamBug | None = None  # the known upstream bug its failure matches
    reproducer: str | None = None  # a standalone script reproducing its failure, relative to the results file
    causes: tuple[Cause, ...] = ()  # what its failure looks like (conformance/data/causes.py); () where it did not fail

    def __post_init__(self):
        object.__setattr__(self, "clauses", tuple(self.clauses))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "causes", tuple(Cause.from_json(c) for c in self.causes))
        if isinstance(self.expected, dict):
            object.__setattr__(self, "expected", Expected(**self.expected))
        if isinstance(self.upstream, dict):
            object.__setattr__(self, "upstream", UpstreamBug(**self.upstream))

    def to_json(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data.update(clauses=list(self.clauses), notes=list(self.notes), causes=[c.to_json() for c in self.causes],
                    expected=self.expected and vars(self.expected), upstream=self.upstream and vars(self.upstream))
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Facts":
        """From a record's or a plan's JSON (keys of other things ignored; keys an older schema lacks defaulted)."""
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})

    def charged(self, clauses, variant: str | None = None) -> "Facts":
        """The same test with its failure charged to ``clauses`` (and to ``variant``, where the regions of another
        variant than the test's differed: a nested checkpoint's), to be judged afresh: its level is theirs."""
        return replace(self, clauses=tuple(clauses), level=None, variant=variant or self.variant)


def clause_ids_of(node) -> list[str]:
    """The clause ids a test's (or a test function's) ``clause`` marks name."""
    return [cid for mark in node.iter_markers("clause") for cid in mark.args]


def item_param(item, name):
    """A parameter of a collected test (``variant``, ``device``), None where it has none."""
    callspec = getattr(item, "callspec", None)
    return callspec.params.get(name) if callspec else None


def _is_report(node) -> bool:
    return hasattr(node, "when")  # a report names its phase; an item has none


def read(node) -> Facts | None:
    """The facts a test item or one of its reports carries (None: not a conformance test)."""
    if not _is_report(node):
        return getattr(node, ATTRIBUTE, None)
    for key, value in getattr(node, "user_properties", ()):
        if key == KEY:
            return Facts.from_json(value)
    return None


def status(report) -> str | None:
    """What happened in a report's phase, as the judge recorded it before it gave pytest its outcome (None: the judge
    did not see the report: not a conformance test's)."""
    return getattr(report, STATUS, None)


def write(node, facts: Facts) -> None:
    """Put ``facts`` on a test item or report, in place of what it carried."""
    if not _is_report(node):
        setattr(node, ATTRIBUTE, facts)
        return
    node.user_properties[:] = [(k, v) for k, v in node.user_properties if k != KEY] + [(KEY, facts.to_json())]


def charge(item, clauses, variant: str | None = None) -> None:
    """Charge the running test's failure to ``clauses`` (the check that failed), not to all it would have checked,
    and to ``variant`` where the regions of another variant than the test's failed it."""
    facts = read(item)
    if facts is not None:
        write(item, facts.charged(clauses, variant))


def note(item, notes) -> None:
    facts = read(item)
    if facts is not None and notes:
        write(item, replace(facts, notes=(*facts.notes, *notes)))


def set_reproducer(item, path: str) -> None:
    """Name a standalone script that reproduces the running test's failure (a path relative to the results
    file; docs/AUTHORING.md): the report links it from the failure's cell."""
    facts = read(item)
    if facts is not None:
        write(item, replace(facts, reproducer=str(path)))
