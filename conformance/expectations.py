"""What is expected of a test that is not simply expected to pass, and why.

Two sources, both pure data: the declared known deviations of named implementations
(``expectations.toml``, with row-level breakages and the known upstream bugs that explain failures of
any implementation built on torch), and the capabilities an implementation claims or provides
(conformance/capabilities.py). :func:`judge` is the one place that combines them for one test, from the
clauses its failure is charged to: the run applies it to every test's result (conformance/judging.py,
for pytest's outcome, the exit status and the results file alike), and the report applies it again to
judge recorded results against an edited expectations file.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from conformance.capabilities import Capabilities
from conformance.facts import Expected, Facts, KnownBug
from conformance.ids import canonical_id
from conformance.registry import Clause, load_clauses
from conformance.results import Results
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
    bug: str  # "owner/repo#N"; for one this project found and has not reported yet, a name saying so
    url: str
    summary: str  # what goes wrong, in a sentence
    clauses: tuple[str, ...] = ()  # optional: only the failures charged to these clauses
    variant: str | None = None

    def explains(self, *, nodeid: str, clauses, variant) -> bool:
        return (self.test in nodeid and self.variant in (None, variant)
                and (not self.clauses or bool(set(self.clauses) & set(clauses))))

    @property
    def known_bug(self) -> KnownBug:
        """What a record of a failure it explains carries."""
        return KnownBug(self.bug, self.url, self.summary)

    @property
    def note(self) -> str:
        return self.known_bug.note


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


@dataclass(frozen=True)
class Expectations:
    """Everything expectations.toml declares."""

    deviations: tuple[Deviation, ...] = ()
    breakages: tuple[Breakage, ...] = ()
    known_upstream: tuple[KnownUpstream, ...] = ()

    @classmethod
    def load(cls, path: Path = EXPECTATIONS_PATH) -> "Expectations":
        path = Path(path)
        return cls(tuple(load_deviations(path)), tuple(load_breakages(path)), tuple(load_known_upstream(path)))


def judge(facts: Facts, *, nodeid: str, status: str, impl: str, capabilities: Capabilities, torch_release: str,
          expectations: Expectations, clauses: dict[str, Clause] | None = None) -> Facts:
    """The one place that says what is expected of a test and the level it is held to, from the clauses its
    result is charged to (``facts.clauses``: a sweep's failure is charged to the check that failed, not to
    every clause the test would have checked). A declared deviation first, else a capability not claimed,
    else, for a failure, a row's declared breakage; and the known upstream bug a failure matches."""
    clauses = load_clauses() if clauses is None else clauses
    expected = expected_for(impl=impl, capabilities=capabilities, clause_ids=facts.clauses, variant=facts.variant,
                            device=facts.device, nodeid=nodeid, deviations=expectations.deviations, clauses=clauses)
    upstream = None
    if status == "fail":
        if expected is None:
            breakage = next((b for b in expectations.breakages if b.covers(
                impl=impl, variant=facts.variant, torch_release=torch_release, clauses=facts.clauses)), None)
            expected = breakage and breakage.expected
        upstream = next((bug.known_bug for bug in expectations.known_upstream
                         if bug.explains(nodeid=nodeid, clauses=facts.clauses, variant=facts.variant)), None)
    return replace(facts.charged(facts.clauses), expected=expected, upstream=upstream)


def rejudge(results: Results, deviations: list[Deviation], clauses: dict[str, Clause] | None = None,
            breakages: list[Breakage] = ()) -> Results:
    """The same results judged against other expectations (:func:`judge`): statuses stay, ``expected`` is
    recomputed, and so is the level each test is held to, from this harness's clause registry.

    The capabilities are those the run recorded in its header; a header without them (schema 1)
    keeps each record's own "unsupported" expectation and is judged again for deviations only."""
    header = results.header
    recorded = header.get("capabilities")
    capabilities = Capabilities.from_json(recorded) if isinstance(recorded, dict) else None
    expectations = Expectations(tuple(deviations), tuple(breakages), ())
    records = []
    for record in results.records:
        facts = judge(record.facts, nodeid=record.nodeid, status=record.status, impl=_impl(header),
                      capabilities=capabilities or Capabilities(), torch_release=release_of(header.get("torch", "")),
                      expectations=expectations, clauses=clauses)
        if capabilities is None and facts.expected is None and record.expected and record.expected.kind == "unsupported":
            facts = replace(facts, expected=record.expected)
        records.append(replace(record, facts=replace(facts, upstream=record.upstream)))
    return Results(header=header, records=records)


def stale_breakages(results: Results, breakages: list[Breakage]) -> list[Breakage]:
    """The breakages that cover tests of this run but explain none of them: the row no longer fails
    the way its breakage says. Judge only a whole row's run (a run narrowed to some clauses may hold
    none of the row's failing tests)."""
    ran = [r for r in results.records if r.status not in ("skip", "not_run")]
    covering = [b for b in breakages if any(_covers(b, results.header, r) for r in ran)]
    return [b for b in covering if not any(r.expected == b.expected for r in ran)]


def _covers(breakage: Breakage, header: dict, record) -> bool:
    return breakage.covers(impl=_impl(header), variant=record.variant,
                           torch_release=release_of(header.get("torch", "")), clauses=record.clauses)


def _impl(header: dict) -> str:
    return canonical_id(str(header.get("implementation", "")))
