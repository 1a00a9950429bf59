"""What is expected of a test that is not simply expected to pass, and why.

Two sources, both pure data: the declared known deviations of named implementations
(``expectations.toml``, with row-level breakages and the known upstream bugs that explain failures of
any implementation built on torch), and the capabilities an implementation claims or provides
(conformance/data/capabilities.py). :func:`judge` is the one place that combines them for one test, from the
clauses its failure is charged to: the run applies it to every test's result (conformance/plugin/judging.py,
for pytest's outcome, the exit status and the results file alike), and the report applies it again to
judge recorded results against an edited expectations file.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator

from conformance.data.capabilities import Capabilities
from conformance.data.causes import Pattern, root, unmatched
from conformance.data.datafiles import FORBID, DataFileError, Names, entries, read_toml
from conformance.data.facts import Expected, Facts, UpstreamBug
from conformance.data.ids import canonical_id
from conformance.data.registry import Clause, level_of, load_clauses
from conformance.data.results import Results
from conformance.data.vocabulary import release_of

EXPECTATIONS_PATH = Path(__file__).with_name("expectations.toml")


def _unknown(ids, known) -> list[str]:
    """Each id that names no clause (an area's id names none), with the nearest clause id."""
    return [f"{i!r} (did you mean {near[0]!r}?)" if (near := difflib.get_close_matches(i, known, n=1)) else repr(i)
            for i in ids if i not in known]


# The fields every declaration shares, as the file writes them.
Impls = Annotated[Names, AfterValidator(lambda ids: tuple(canonical_id(i) for i in ids))]  # any spelling of --impl
# What the failure a declaration was written for looks like (conformance/data/causes.py): one table, a list of them, or "any".
Causes = Annotated[tuple[Pattern, ...], BeforeValidator(lambda v: [Pattern(anything=True)] if v == "any" else
                                                        v if isinstance(v, list) else [v])]


@dataclass(frozen=True)
class Deviation:
    """A known deviation: the tests it covers (implementations, clauses, optionally a variant, a device and
    node-id substrings, each field one name or several) fail, for ``reason``, the way ``failure`` says
    (conformance/data/causes.py). One cause, one entry: a cause several rows or clauses show is written once."""

    __pydantic_config__ = FORBID  # conformance/data/datafiles.py

    impl: Impls  # canonical ids (any spelling in the file is canonicalized)
    clauses: Names
    reason: str
    failure: Causes  # what the failure looks like
    variant: str | None = None
    device: str | None = None
    test: Names = ()  # node id substrings: any of them; () for every test

    @property
    def by_cause(self) -> bool:
        """Declared by its cause over a scope (no test ids): a test of the scope that passes is a pass, and the
        declaration goes stale when no test of a whole run fails with its cause. Otherwise each test it names is
        expected to fail (a pass is a fixed deviation)."""
        return not self.test

    @property
    def expected(self) -> Expected:
        return Expected("deviation", self.reason)

    def covers(self, *, impl: str, variant, clauses=(), device=None, nodeid: str = "", **_) -> bool:
        return self.matches(impl=impl, clauses=clauses, variant=variant, device=device, nodeid=nodeid)

    def matches(self, *, impl: str, clauses, variant, device, nodeid: str) -> bool:
        return (
            impl in self.impl
            and bool(set(self.clauses) & set(clauses))
            and self.variant in (None, variant)
            and self.device in (None, device)
            and (not self.test or any(test in nodeid for test in self.test))
        )


def _checked(path: Path, table: str, raw: list[dict], declarations: list) -> list:
    """The declarations of one table (read from its ``raw`` entries), each checked against the clause registry and for
    what its model cannot say."""
    known = load_clauses()
    for index, (entry, declaration) in enumerate(zip(raw, declarations), start=1):
        problems = [f"names unknown clause(s) {'; '.join(unknown)}" for unknown in [_unknown(declaration.clauses, known)]
                    if unknown]
        problems += ["has no reason"] * (not getattr(declaration, "reason", "x").strip())
        problems += ["names no implementation"] * (hasattr(declaration, "impl") and not declaration.impl)
        if table == "deviation":
            problems += ["names no clause"] * (not declaration.clauses)
            problems += ['a deviation names the failure it expects; "any" is a row\'s breakage'] * any(
                p.anything for p in declaration.failure)
        if problems:
            raise DataFileError(f"{path}: [[{table}]] #{index} ({_label(entry)}): {'; '.join(problems)}")
    return declarations


def _label(entry: dict) -> str:
    """How an error names a declaration: its bug, else its implementations and clauses."""
    return str(entry.get("bug") or "/".join(filter(None, (_text(entry.get("impl")), _text(entry.get("clauses"))))) or "?")


def _text(names) -> str:
    return ",".join(names) if isinstance(names, list) else str(names or "")


def load_deviations(path: Path = EXPECTATIONS_PATH) -> list[Deviation]:
    return list(Expectations.load(path).deviations)


def expected_for(*, impl: str, capabilities: Capabilities, clause_ids, variant: str | None, device: str | None,
                 nodeid: str, deviations: list[Deviation], clauses: dict[str, Clause], causes=()) -> Expected | None:
    """What is expected of one test of ``impl``: a declared deviation first, else an unclaimed
    capability, else nothing (it is expected to pass). A failure (``causes``) is expected by the deviations
    covering the test only where each of its causes matches one of their causes."""
    declared = [d for d in deviations
                if d.matches(impl=impl, clauses=clause_ids, variant=variant, device=device, nodeid=nodeid)]
    if not causes:  # planned, or passed: only the declarations that expect each test they cover to fail
        declared = [d for d in declared if not d.by_cause]
    if declared and (not causes or explains(declared, causes)):
        return _root_declaration(declared, causes).expected
    features = [f for cid in clause_ids if cid in clauses for f in clauses[cid].features]
    unclaimed = capabilities.unclaimed(variant=variant, device=device, features=features)
    if unclaimed:
        return Expected("unsupported", f"{impl} does not claim {', '.join(unclaimed)}")
    return None


def explains(declarations, causes) -> bool:
    """Whether the declarations covering a failure explain it: each of its causes matches a cause one of them
    declares."""
    return not unmatched(causes, [p for d in declarations for p in d.failure])


def unexplained(declarations, causes) -> str:
    """Why declarations that cover a failure do not explain it ("declared for X, this is Y")."""
    patterns = [p for d in declarations for p in d.failure]
    others = unmatched(causes, patterns)
    return (f"declared ({'; '.join(dict.fromkeys(str(p) for p in patterns))}) for: {declarations[0].reason[:200]}; "
            f"this failure is {'; '.join(str(c)[:200] for c in others)}")


@dataclass(frozen=True)
class KnownUpstream:
    """A bug of an upstream project (torch) that explains some failing tests of whatever implementation
    is built on it. Keyed by test, not by implementation: a module that re-exports torch's checkpoint under
    another name fails the same tests, and its failure message then names the bug instead of leaving the
    implementer to hunt for it. The failure stays a failure."""

    __pydantic_config__ = FORBID  # conformance/data/datafiles.py

    test: Names  # substrings of the node ids of the tests it fails: any of them
    bug: str  # "owner/repo#N"; for one this project found and has not reported yet, a name saying so
    url: str
    summary: str  # what goes wrong, in a sentence
    clauses: Names = ()  # optional: only the failures charged to these clauses
    variant: str | None = None
    failure: Causes = ()  # optional: only the failures that look so (conformance/data/causes.py)

    def explains(self, *, nodeid: str, clauses, variant, causes=()) -> bool:
        return (any(test in nodeid for test in self.test) and self.variant in (None, variant)
                and (not self.clauses or bool(set(self.clauses) & set(clauses)))
                and (not self.failure or not causes or not unmatched(causes, self.failure)))

    @property
    def upstream_bug(self) -> UpstreamBug:
        """What a record of a failure it explains carries."""
        return UpstreamBug(self.bug, self.url, self.summary)

    @property
    def note(self) -> str:
        return self.upstream_bug.note


def load_known_upstream(path: Path = EXPECTATIONS_PATH) -> list[KnownUpstream]:
    return list(Expectations.load(path).known_upstream)


@dataclass(frozen=True)
class Breakage:
    """Row-level known breakage: one root cause that explains every failing test of a row (an
    implementation, optionally one variant, optionally on one torch release), declared once instead
    of once per clause. Stale when none of the row's tests fails any more."""

    __pydantic_config__ = FORBID  # conformance/data/datafiles.py

    impl: Impls  # one row or several that share the cause
    reason: str
    variant: str | None = None
    torch: str | None = None  # a torch release "x.y": the breakage holds only when that torch is under test
    clauses: Names = ()  # where one row has several root causes: the tests (of these clauses) each covers
    failure: Causes = ()  # what its failures look like (conformance/data/causes.py)

    @property
    def expected(self) -> Expected:
        """What a failing test of its row is expected to be."""
        return Expected("deviation", f"known breakage: {self.reason}")

    def covers(self, *, impl: str, variant, torch_release: str, clauses=(), **_) -> bool:
        return (impl in self.impl and self.variant in (None, variant) and self.torch in (None, torch_release)
                and (not self.clauses or bool(set(self.clauses) & set(clauses))))


def load_breakages(path: Path = EXPECTATIONS_PATH) -> list[Breakage]:
    return list(Expectations.load(path).breakages)


@dataclass(frozen=True)
class Expectations:
    """Everything expectations.toml declares."""

    deviations: tuple[Deviation, ...] = ()
    breakages: tuple[Breakage, ...] = ()
    known_upstream: tuple[KnownUpstream, ...] = ()

    @classmethod
    def load(cls, path: Path = EXPECTATIONS_PATH) -> "Expectations":
        """The file's declarations, each checked at the door (conformance/data/datafiles.py) and against the clause
        registry. Breakages restricted to some clauses come first (file order kept within each): a test covered by two
        takes the most specific, so a row-wide cause never swallows a failure a cause of its own was declared for."""
        return _load(Path(path))


def _load(path: Path) -> Expectations:
    raw = read_toml(path, TABLES)
    for table in ("deviation", "breakage"):  # so that a declaration cannot hide a failure it was not written for
        for index, entry in enumerate(raw[table], start=1):
            if "failure" not in entry:
                raise DataFileError(f"{path}: [[{table}]] #{index} ({_label(entry)}): names no failure: say what the "
                                    "failure it expects looks like, failure = { exception = ..., message = ... } or "
                                    "{ observable = ..., detail = ... } (the failure's message shows its causes)")
    read = {table: _checked(path, table, raw[table], entries(path, table, raw[table], model, name=_label))
            for table, model in (("deviation", Deviation), ("breakage", Breakage), ("known_upstream", KnownUpstream))}
    breakages = sorted(read["breakage"], key=lambda breakage: not breakage.clauses)
    return Expectations(tuple(read["deviation"]), tuple(breakages), tuple(read["known_upstream"]))


TABLES = ("deviation", "breakage", "known_upstream")


def judge(facts: Facts, *, nodeid: str, status: str, impl: str, capabilities: Capabilities, torch_release: str,
          expectations: Expectations, clauses: dict[str, Clause] | None = None) -> Facts:
    """The one place that says what is expected of a test and the level it is held to, from the clauses its
    result is charged to (``facts.clauses``: a sweep's failure is charged to the check that failed, not to
    every clause the test would have checked). A declared deviation first, else a capability not claimed,
    else, for a failure, a row's declared breakage; and the known upstream bug a failure matches."""
    clauses = load_clauses() if clauses is None else clauses
    causes = facts.causes if status == "fail" else ()
    expected = expected_for(impl=impl, capabilities=capabilities, clause_ids=facts.clauses, variant=facts.variant,
                            device=facts.device, nodeid=nodeid, deviations=expectations.deviations, clauses=clauses,
                            causes=causes)
    upstream = None
    if status == "fail":
        if expected is None:
            expected = _jointly_expected(facts, nodeid=nodeid, impl=impl, torch_release=torch_release,
                                         expectations=expectations, causes=causes)
        upstream = next((bug.upstream_bug for bug in expectations.known_upstream
                         if bug.explains(nodeid=nodeid, clauses=facts.clauses, variant=facts.variant, causes=causes)), None)
    return replace(facts, level=level_of(facts.clauses, clauses), expected=expected, upstream=upstream)


def _covering(facts: Facts, *, nodeid: str, impl: str, torch_release: str, expectations: Expectations) -> list:
    """Every declaration whose scope covers this test: its deviations, then its row's breakages (the ones
    restricted to some clauses first)."""
    scope = dict(impl=impl, clauses=facts.clauses, variant=facts.variant)
    return [*(d for d in expectations.deviations if d.matches(**scope, device=facts.device, nodeid=nodeid)),
            *(b for b in expectations.breakages if b.covers(**scope, torch_release=torch_release))]


def _jointly_expected(facts: Facts, *, nodeid: str, impl: str, torch_release: str, expectations: Expectations,
                      causes) -> Expected | None:
    """A failure that several declarations explain together (a row's breakage and a clause's deviation, each
    naming one of its causes): the expectation of the one that declares its root cause."""
    declared = _covering(facts, nodeid=nodeid, impl=impl, torch_release=torch_release, expectations=expectations)
    if not declared or (causes and not explains(declared, causes)):
        return None
    return _root_declaration(declared, causes).expected


def _root_declaration(declared: list, causes):
    """Of the declarations explaining a failure, the one that declares its root cause (its reason is the failure's)."""
    first = root(causes)
    return next((d for d in declared if first is None or any(p.matches(first) for p in d.failure)), declared[0])


def mismatch(facts: Facts, *, nodeid: str, impl: str, torch_release: str, expectations: Expectations) -> str | None:
    """For a failure no declaration explains: why the declarations that cover it by their scope do not (their
    cause is another), or None where none covers it."""
    if not facts.causes:
        return None
    declared = _covering(facts, nodeid=nodeid, impl=impl, torch_release=torch_release, expectations=expectations)
    return unexplained(declared, facts.causes) if declared and not explains(declared, facts.causes) else None


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


def stale_declarations(results: Results, breakages: list) -> list:
    """The breakages (and deviations declared by cause, :attr:`Deviation.by_cause`) that cover tests of this
    run but explain none of them, not even one cause of a failure another declaration explains with it: the row
    no longer fails the way its declaration says. Judge only a whole row's run (a run narrowed to some clauses
    may hold none of the row's failing tests)."""
    ran = [r for r in results.records if r.status not in ("skip", "not_run")
           and not (r.expected and r.expected.kind == "unsupported")]  # a variant or feature it does not claim
    covering = [b for b in breakages if any(_covers(b, results.header, r) for r in ran)]
    return [b for b in covering if not any(r.expected == b.expected or _names_a_cause_of(b, results.header, r) for r in ran)]


def _names_a_cause_of(declaration, header: dict, record) -> bool:
    return _covers(declaration, header, record) and any(p.matches(c) for p in declaration.failure for c in record.facts.causes)


def _covers(breakage, header: dict, record) -> bool:
    return breakage.covers(impl=_impl(header), variant=record.variant, device=record.device, nodeid=record.nodeid,
                           torch_release=release_of(header.get("torch", "")), clauses=record.clauses)


def stale_message(declaration) -> str:
    """What a run says of a declaration that went stale (:func:`stale_declarations`), in the session and the runner alike."""
    return (f"stale declaration (no test it covers failed as it says; remove it from expectations.toml): "
            f"{'/'.join(declaration.impl)} {declaration.variant or ''}: {declaration.reason[:120]}")


def run_level(expectations: "Expectations") -> list:
    """The declarations judged over a whole run (stale when none of the tests they cover fails as they say):
    breakages, and deviations declared by cause."""
    return [*expectations.breakages, *(d for d in expectations.deviations if d.by_cause)]


def declaration_text(*, impl: str, clauses, variants, patterns) -> str:
    """A [[deviation]] entry for one cause, as a maintainer pastes it into this file: its scope and its cause
    filled in, its reason left to write (the loader rejects an empty one)."""
    clauses, variants = list(dict.fromkeys(clauses)), set(variants)
    causes = [p.to_toml() for p in dict.fromkeys(patterns)]
    lines = ["[[deviation]]", f"impl = {json.dumps(impl)}",
             f"clauses = {json.dumps(clauses[0] if len(clauses) == 1 else clauses)}",
             *([f"variant = {json.dumps(variants.pop())}"] if len(variants) == 1 else []),
             "failure = " + (causes[0] if len(causes) == 1 else "[" + ",\n         ".join(causes) + "]"),
             'reason = ""  # why it deviates (what the package does, and where): the loader rejects an empty reason']
    return "\n".join(lines)


def _impl(header: dict) -> str:
    return canonical_id(str(header.get("implementation", "")))
