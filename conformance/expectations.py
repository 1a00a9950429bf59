"""Declared known deviations (``expectations.toml``): which tests of which implementation are
expected to fail, and why. Matching is pure data; the plugin turns matches into strict xfails."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from conformance.registry import load_clauses

EXPECTATIONS_PATH = Path(__file__).with_name("expectations.toml")


@dataclass(frozen=True)
class Deviation:
    impl: str
    clause: str
    reason: str
    variant: str | None = None
    device: str | None = None
    test: str | None = None

    def matches(self, *, impl: str, clauses, variant, device, nodeid: str) -> bool:
        return (
            self.impl == impl
            and self.clause in clauses
            and self.variant in (None, variant)
            and self.device in (None, device)
            and (self.test is None or self.test in nodeid)
        )


def load_deviations(path: Path = EXPECTATIONS_PATH) -> list[Deviation]:
    with open(path, "rb") as f:
        entries = tomllib.load(f).get("deviation", [])
    known = load_clauses()
    deviations = []
    for entry in entries:
        deviation = Deviation(**entry)
        if deviation.clause not in known:
            raise ValueError(f"{path}: deviation names unknown clause {deviation.clause!r}")
        if not deviation.reason.strip():
            raise ValueError(f"{path}: deviation for {deviation.impl}/{deviation.clause} has no reason")
        deviations.append(deviation)
    return deviations


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

    def covers(self, *, impl: str, variant, torch_release: str, clauses=()) -> bool:
        return (self.impl == impl and self.variant in (None, variant) and self.torch in (None, torch_release)
                and (not self.clauses or bool(set(self.clauses) & set(clauses))))


def load_breakages(path: Path = EXPECTATIONS_PATH) -> list[Breakage]:
    with open(path, "rb") as f:
        entries = tomllib.load(f).get("breakage", [])
    breakages = [Breakage(**{**entry, "clauses": tuple(entry.get("clauses", ()))}) for entry in entries]
    known = load_clauses()
    for breakage in breakages:
        if not breakage.reason.strip():
            raise ValueError(f"{path}: breakage of {breakage.impl} has no reason")
        if not set(breakage.clauses) <= set(known):
            raise ValueError(f"{path}: breakage of {breakage.impl} names unknown clauses {breakage.clauses}")
    return breakages
