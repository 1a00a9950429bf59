"""What is expected of a test that is not simply expected to pass, and why.

Two sources, both pure data: the declared known deviations of named implementations
(``expectations.toml``, with row-level breakages and the known upstream bugs that explain failures of
any implementation built on torch), and the capabilities an implementation claims or provides
(conformance/capabilities.py). :func:`expected_for` combines them for one test. The plugin applies it
at collection (a deviation becomes a strict xfail, an unclaimed capability a non-strict one), and the
report applies it again to judge recorded results against an edited expectations file.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from conformance.binding import canonical_id
from conformance.capabilities import Capabilities
from conformance.registry import Clause, load_clauses
from conformance.results import Expected, Results
from conformance.vocabulary import release_of

EXPECTATIONS_PATH = Path(__file__).with_name("expectations.toml")


@dataclass(frozen=True)
class Deviation:
    impl: str  # the implementation's canonical id (any spelling in the file is canonicalized)
    clause: str
    reason: str
    variant: str | None = None
    device: str | None = None
    test: str | tuple[str, ...] | None = None  # a node id substring, or several: any of them

    def matches(self, *, impl: str, clauses, variant, device, nodeid: str) -> bool:
        tests = (self.test,) if isinstance(self.test, str) else self.test
        return (
            self.impl == impl
            and self.clause in clauses
            and self.variant in (None, variant)
            and self.device in (None, device)
            and (tests is None or any(test in nodeid for test in tests))
        )


def load_deviations(path: Path = EXPECTATIONS_PATH) -> list[Deviation]:
    with open(path, "rb") as f:
        entries = tomllib.load(f).get("deviation", [])
    known = load_clauses()
    deviations = []
    for entry in entries:
        if isinstance(entry.get("test"), list):  # frozen, like the rest of a Deviation
            entry = {**entry, "test": tuple(entry["test"])}
        deviation = Deviation(**{**entry, "impl": canonical_id(entry.get("impl", ""))})
        if deviation.clause not in known:
            raise ValueError(f"{path}: deviation names unknown clause {deviation.clause!r}")
        if not deviation.reason.strip():
            raise ValueError(f"{path}: deviation for {deviation.impl}/{deviation.clause} has no reason")
        deviations.append(deviation)
    return deviations


def expected_for(*, impl: str, capabilities: Capabilities, clause_ids, variant: str | None, device: str | None,
                 nodeid: str, deviations: list[Deviation], clauses: dict[str, Clause]) -> Expected | None:
    """What is expected of one test of ``impl``: a declared deviation first, else an unclaimed
    capability, else nothing (it is expected to pass)."""
    for deviation in deviations:
        if deviation.matches(impl=impl, clauses=clause_ids, variant=variant, device=device, nodeid=nodeid):
            return Expected("deviation", deviation.reason)
    features = [f for cid in clause_ids if cid in clauses for f in clauses[cid].features]
    unclaimed = capabilities.unclaimed(variant=variant, device=device, features=features)
    if unclaimed:
        return Expected("unsupported", f"{impl} does not claim {', '.join(unclaimed)}")
    return None


@dataclass(frozen=True)
class KnownUpstream:
    """A bug of an upstream project (torch) that explains some failing tests of whatever implementation
    is built on it. Keyed by test, not by implementation: a module that re-exports torch's checkpoint under
    another name fails the same tests, and its failure message then names the bug instead of leaving the
    implementer to hunt for it. The failure stays a failure."""

    test: str  # a substring of the node ids of the tests it fails
    bug: str  # "owner/repo#N"
    url: str
    summary: str  # what goes wrong, in a sentence
    clauses: tuple[str, ...] = ()  # optional: only the failures charged to these clauses
    variant: str | None = None

    def explains(self, *, nodeid: str, clauses, variant) -> bool:
        return (self.test in nodeid and self.variant in (None, variant)
                and (not self.clauses or bool(set(self.clauses) & set(clauses))))

    @property
    def note(self) -> str:
        return f"this failure matches a known upstream bug, {self.bug} ({self.url}): {self.summary}"


def load_known_upstream(path: Path = EXPECTATIONS_PATH) -> list[KnownUpstream]:
    with open(path, "rb") as f:
        entries = tomllib.load(f).get("known_upstream", [])
    known = load_clauses()
    bugs = [KnownUpstream(**{**entry, "clauses": tuple(entry.get("clauses", ()))}) for entry in entries]
    for bug in bugs:
        if not set(bug.clauses) <= set(known):
            raise ValueError(f"{path}: known upstream bug {bug.bug} names unknown clauses {bug.clauses}")
    return bugs


@dataclass(frozen=True)
class Breakage:
    """Row-level known breakage: one root cause that explains every failing test of a row (an
    implementation, optionally one variant, optionally on one torch release), declared once instead
    of once per clause. Stale when none of the row's tests fails any more."""

    impl: str
    reason: str
    variant: str | None = None
    torch: str | None = None  # a torch release "x.y": the breakage holds only when that torch is under test
    clauses: tuple[str, ...] = ()  # where one row has several root causes: the tests (of these clauses) each covers

    @property
    def expected(self) -> Expected:
        """What a failing test of its row is expected to be."""
        return Expected("deviation", f"known breakage: {self.reason}")

    def covers(self, *, impl: str, variant, torch_release: str, clauses=()) -> bool:
        return (self.impl == impl and self.variant in (None, variant) and self.torch in (None, torch_release)
                and (not self.clauses or bool(set(self.clauses) & set(clauses))))


def load_breakages(path: Path = EXPECTATIONS_PATH) -> list[Breakage]:
    """The declared breakages, the ones restricted to some clauses first (file order kept within each): a
    test covered by two takes the most specific, so a row-wide cause never swallows a failure that a
    cause of its own was declared for."""
    with open(path, "rb") as f:
        entries = tomllib.load(f).get("breakage", [])
    breakages = [Breakage(**{**entry, "impl": canonical_id(entry["impl"]), "clauses": tuple(entry.get("clauses", ()))})
                 for entry in entries]
    known = load_clauses()
    for breakage in breakages:
        if not breakage.reason.strip():
            raise ValueError(f"{path}: breakage of {breakage.impl} has no reason")
        if not set(breakage.clauses) <= set(known):
            raise ValueError(f"{path}: breakage of {breakage.impl} names unknown clauses {breakage.clauses}")
    return sorted(breakages, key=lambda breakage: not breakage.clauses)


def rejudge(results: Results, deviations: list[Deviation], clauses: dict[str, Clause] | None = None,
            breakages: list[Breakage] = ()) -> Results:
    """The same results judged against other expectations: statuses stay, ``expected`` is recomputed
    (a failing test of a row with a declared breakage is expected to fail, as in the run), and so is the
    level each test is held to, from this harness's clause registry.

    The capabilities are those the run recorded in its header; a header without them (schema 1)
    keeps each record's own "unsupported" expectation and is judged again for deviations only."""
    clauses = load_clauses() if clauses is None else clauses
    header = results.header
    impl = canonical_id(str(header.get("implementation", "")))
    recorded = header.get("capabilities")
    capabilities = Capabilities.from_json(recorded) if isinstance(recorded, dict) else None
    records = []
    for record in results.records:
        expected = expected_for(impl=impl, capabilities=capabilities or Capabilities(), clause_ids=record.clauses,
                                variant=record.variant, device=record.device, nodeid=record.nodeid,
                                deviations=deviations, clauses=clauses)
        if capabilities is None and expected is None and record.expected and record.expected.kind == "unsupported":
            expected = record.expected
        if expected is None and record.status == "fail":
            breakage = next((b for b in breakages if _covers(b, header, record)), None)
            if breakage is not None:
                expected = breakage.expected
        records.append(replace(record, expected=expected, level=None))  # None: the level of this harness's registry
    return Results(header=header, records=records)


def stale_breakages(results: Results, breakages: list[Breakage]) -> list[Breakage]:
    """The breakages that cover tests of this run but explain none of them: the row no longer fails
    the way its breakage says. Judge only a whole row's run (a run narrowed to some clauses may hold
    none of the row's failing tests)."""
    ran = [r for r in results.records if r.status not in ("skip", "not_run")]
    covering = [b for b in breakages if any(_covers(b, results.header, r) for r in ran)]
    return [b for b in covering if not any(r.expected == b.expected for r in ran)]


def _covers(breakage: Breakage, header: dict, record) -> bool:
    return breakage.covers(impl=canonical_id(str(header.get("implementation", ""))), variant=record.variant,
                           torch_release=release_of(header.get("torch", "")), clauses=record.clauses)
