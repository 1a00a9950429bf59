"""The clause registry: ``conformance/data/clauses.toml`` loaded into :class:`Clause` records.

Every conformance test names the clause(s) it checks; this module is the single place that knows
what a clause is. It imports neither pytest nor torch, so the report renderer can use it too.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import NamedTuple

from conformance.data.datafiles import FORBID, DataFileError, Stripped, entries, read_toml

from conformance.data.vocabulary import (
    BINDING_LEVEL,
    DOCUMENTED_LEVELS,
    LEVELS,
    ORACLE_CONDITIONS,
    ORACLE_OBSERVABLES,
    VARIANTS,
    strictest,
)

CLAUSES_PATH = Path(__file__).with_name("clauses.toml")

# Levels (vocabulary.LEVELS): OBSERVED is what torch does where the docs are silent. Such a clause records
# torch compatibility, not conformance: an implementation that differs there differs from torch, it does
# not break the contract.
TEXT_KINDS = ("quote", "paraphrase")

# A clause's source is something a user can open: the public address of the page or pull request it quotes
# (a versioned docs page, e.g. https://pytorch.org/docs/2.1/checkpoint.html), or the docstring of an object of
# the named torch release, read with help() (e.g. docstring:torch==2.13.0:torch.utils.checkpoint.checkpoint).
URL_SOURCE = re.compile(r"https://[^\s]+")
DOCSTRING_SOURCE = re.compile(r"docstring:torch==(?P<version>\d+\.\d+(\.\d+)?):(?P<object>[A-Za-z_][\w.]*)")


class Relaxation(NamedTuple):
    """A difference from the plain run that a clause allows (the oracle's, conformance/oracle/)."""

    observable: str  # vocabulary.ORACLE_OBSERVABLES
    when: str  # vocabulary.ORACLE_CONDITIONS


@dataclass(frozen=True)
class Area:
    __pydantic_config__ = FORBID

    id: str
    title: str


@dataclass(frozen=True)
class Clause:
    __pydantic_config__ = FORBID  # conformance/data/datafiles.py: an unknown key in clauses.toml fails at load

    id: str
    area: str
    title: str
    level: str  # MUST | SHOULD | MAY | OBSERVED
    variants: tuple[str, ...]  # which variant(s) the clause binds
    source: str  # "https://..." (the page or pull request) or "docstring:torch==<version>:<object>"
    text: Stripped  # the spec sentence the clause derives from
    dimensions: tuple[str, ...]  # the input dimensions the text quantifies over (conformance/data/dimensions.py)
    text_kind: str = "quote"  # "quote": verbatim from source; "paraphrase": our wording
    features: tuple[str, ...] = ()  # optional capabilities the clause needs (see capabilities.py)
    note: Stripped = ""  # where observed torch behaviour and the docs differ, which one is checked and why
    since: str = ""  # the torch release ("x.y") the clause holds from; "" for every release tested
    relaxes: tuple[Relaxation, ...] = ()  # the differences from the plain run the clause allows, for the oracle

    @property
    def is_must(self) -> bool:
        return self.level == BINDING_LEVEL

    @property
    def is_documented(self) -> bool:
        """The clause states the documented contract (not only torch's behaviour where the docs are silent)."""
        return self.level in DOCUMENTED_LEVELS

    @property
    def source_url(self) -> str:
        """The address to open the source at; "" for a docstring (read it with help())."""
        return self.source if URL_SOURCE.fullmatch(self.source) else ""

    @property
    def source_label(self) -> str:
        """The source as a reader names it: "torch 2.13.0 docstring of torch.utils.checkpoint.checkpoint", or
        the address."""
        docstring = DOCSTRING_SOURCE.fullmatch(self.source)
        return f"torch {docstring['version']} docstring of {docstring['object']}" if docstring else self.source


def _problems(clause: Clause, areas: dict[str, str]) -> list[str]:
    """What the clause says that its model cannot check alone: its values against the vocabulary and the file's areas."""
    problems = [
        f"unknown level {clause.level!r}" * (clause.level not in LEVELS),
        f"unknown variant in {clause.variants!r}" * (not set(clause.variants) <= set(VARIANTS)),
        "binds no variant" * (not clause.variants),
        f"unknown area {clause.area!r}" * (clause.area not in areas),
        f"unknown text_kind {clause.text_kind!r}" * (clause.text_kind not in TEXT_KINDS),
        f"source {clause.source!r} is neither an https address nor docstring:torch==VERSION:OBJECT"
        * (not (URL_SOURCE.fullmatch(clause.source) or DOCSTRING_SOURCE.fullmatch(clause.source))),
        f"since {clause.since!r} is not a release 'x.y'" * (clause.since != "" and not re.fullmatch(r"\d+\.\d+", clause.since)),
    ]
    problems += [f"relaxes unknown observable {o!r}" for o, _ in clause.relaxes if o not in ORACLE_OBSERVABLES]
    problems += [f"relaxes under unknown condition {w!r}" for _, w in clause.relaxes if w not in ORACLE_CONDITIONS]
    return [p for p in problems if p]


@cache
def _load(path: Path) -> tuple[dict[str, str], dict[str, Clause]]:
    raw = read_toml(path, ("area", "clause"))
    areas = {a.id: a.title for a in entries(path, "area", raw["area"], Area, name=lambda e: e.get("id", "?"))}
    clauses: dict[str, Clause] = {}
    for index, clause in enumerate(entries(path, "clause", raw["clause"], Clause, name=lambda e: e.get("id", "?")), 1):
        if problems := _problems(clause, areas):
            raise DataFileError(f"{path}: [[clause]] #{index} ({clause.id}): {'; '.join(problems)}")
        if clause.id in clauses:
            raise DataFileError(f"{path}: [[clause]] #{index}: duplicate clause id {clause.id!r}")
        clauses[clause.id] = clause
    return areas, clauses


def load_areas(path: Path = CLAUSES_PATH) -> dict[str, str]:
    """Area id -> human title, in file order."""
    return _load(Path(path))[0]


def load_clauses(path: Path = CLAUSES_PATH) -> dict[str, Clause]:
    """Clause id -> Clause, in file order. Raises DataFileError on a malformed file (conformance/data/datafiles.py)."""
    return _load(Path(path))[1]


def level_of(clause_ids, clauses: dict[str, Clause] | None = None) -> str:
    """The level a test charged to these clauses is held to: the strictest of theirs (an id this
    registry does not know counts as a MUST)."""
    clauses = load_clauses() if clauses is None else clauses
    return strictest(clauses[cid].level if cid in clauses else "?" for cid in clause_ids)


def unknown_ids(ids) -> list[str]:
    """For each of ``ids`` that names neither a clause nor an area, what to say: the id and the nearest known
    id, or, with none near, where to look the ids up. [] when every id is known."""
    clauses, areas = load_clauses(), load_areas()
    known = [*areas, *clauses]
    problems = []
    for unknown in (i for i in ids if i not in clauses and i not in areas):
        nearest = difflib.get_close_matches(unknown, known, n=1)
        area = unknown.split(".")[0]
        hint = (f"did you mean {nearest[0]!r}?" if nearest
                else f"no such clause in area {area!r}; list them with: python -m conformance clauses {area}"
                if area in areas else f"the areas are {', '.join(areas)}; list the clauses with: python -m conformance clauses")
        problems.append(f"{unknown!r} ({hint})")
    return problems
