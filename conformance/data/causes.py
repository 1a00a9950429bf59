"""A failure's *cause*: what the failure looks like, written once and read by everything that sorts failures.

A cause is either an **exception** (its type, with the names of its bases, and its message) or a
**difference** the suite observed between the checkpointed run and the plain one (the observable that
differs, ``conformance/oracle/observe.py``'s vocabulary, and a detail). The oracle reports differences;
the assertion helpers (conformance/testing/assertions.py) raise :class:`DifferenceFound`, a difference too; anything else
a test raises is an exception cause.

Three readers, one notion:

- the judge records a failing test's causes (conformance/plugin/judging.py, :func:`causes_of`), and a declared
  deviation or breakage holds only where every cause of the failure matches one of its :class:`Pattern`
  (conformance/data/expectations.py): a declaration cannot hide a failure it was not written for;
- the report groups an implementation's failures by :attr:`Cause.signature` ("one cause, N tests");
- the oracle charges each difference to the clause of its observable (conformance/oracle/allowances.py).

Plain data: it imports nothing of the harness, nor pytest, nor torch.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from conformance.data.datafiles import FORBID

KINDS = ("exception", "difference")
DETAIL_LIMIT = 500


@dataclass(frozen=True)
class Cause:
    __pydantic_config__ = FORBID  # read at the door with a results file (conformance/data/results.py)

    kind: str  # KINDS
    name: str  # exception: the type's name; difference: the observable
    detail: str  # exception: its message; difference: what differs
    bases: tuple[str, ...] = ()  # exception: the names of the type's bases (a RuntimeError subclass matches RuntimeError)
    step: int | None = None  # difference: the step of the program it was seen at (the oracle's), None if unknown

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown cause kind {self.kind!r}")
        object.__setattr__(self, "bases", tuple(self.bases))
        object.__setattr__(self, "detail", str(self.detail)[:DETAIL_LIMIT])

    def __str__(self) -> str:
        return f"{self.name}: {self.detail}"

    @property
    def signature(self) -> str:
        """What alike failures share, whatever program or input showed them: an exception's type and its
        message with numbers, addresses, quoted names and indices masked; a difference's observable (its detail
        names the program's own tensors, which differ from test to test)."""
        if self.kind == "exception":
            return f"{self.name}: {_masked(self.detail)}"
        return f"{self.name} differs from the plain run"

    def to_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, "detail": self.detail, **({"bases": list(self.bases)} if self.bases else {}),
                **({"step": self.step} if self.step is not None else {})}

    @classmethod
    def from_json(cls, data) -> "Cause":
        return data if isinstance(data, Cause) else cls(**data)


# What _masked puts in place of a varying part of a message (an address's 0x… reads #x…, its 0 masked as a number too).
_MASKS = ("#x…", "'…'", "[…]", "#")
_PATTERN_LIMIT = 120  # characters of a masked message a suggested pattern keeps (cut at a space)


def _pattern_of(masked: str) -> str:
    """A regular expression for a masked message's start, for a person to read: its text literal, each stretch of
    masked parts (with the separators between them) any text."""
    if len(masked) > _PATTERN_LIMIT:
        masked = masked[:masked.rfind(" ", 0, _PATTERN_LIMIT)] if " " in masked[:_PATTERN_LIMIT] else masked[:_PATTERN_LIMIT]
    parts = re.split("(" + "|".join(re.escape(m) for m in _MASKS) + ")", masked)
    # re.escape would escape spaces and punctuation too: only the metacharacters, so that a person can read it
    regex = "".join(".*" if p in _MASKS else re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", p) for p in parts)
    return "^" + re.sub(r"\.\*(?:[:,;= ]*\.\*)+", ".*", regex)


def _masked(text: str) -> str:
    text = text.splitlines()[0] if text else ""
    text = re.sub(r"0x[0-9a-fA-F]+", "0x…", text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"\[[^\]]*\]", "[…]", text)
    return re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "#", text)


class DifferenceFound(AssertionError):
    """A test's assertion found the checkpointed run different from the plain one in one observable: the
    failure's cause is that difference (the message stays the assertion's)."""

    def __init__(self, observable: str, detail: str):
        super().__init__(detail)
        self.causes = (Cause("difference", observable, detail),)

    @classmethod
    def of(cls, message: str, causes) -> "DifferenceFound":
        """A failure that found several differences (the oracle's): its message, and each difference a cause."""
        error = cls("", message)
        error.causes = tuple(causes)
        return error


def exception_cause(exc: BaseException) -> Cause:
    bases = tuple(t.__name__ for t in type(exc).__mro__[1:] if t not in (object, BaseException, Exception))
    message = str(exc).strip()
    return Cause("exception", type(exc).__name__, message, bases)


def causes_of(exc: BaseException | None) -> tuple[Cause, ...]:
    """The causes of the exception a test failed with: the differences it carries (``causes``), those of each
    exception of a group (hypothesis reports several distinct failures as one), else the exception itself."""
    if exc is None:
        return ()
    carried = getattr(exc, "causes", None)
    if carried:
        return tuple(Cause.from_json(c) for c in carried)
    if isinstance(exc, BaseExceptionGroup):
        return tuple(dict.fromkeys(c for inner in exc.exceptions for c in causes_of(inner)))
    return (exception_cause(exc),)


@dataclass(frozen=True)
class Pattern:
    """What a declared failure looks like: an exception (its type or a base's name, a regular expression its
    message contains) or a difference (its observable, a regular expression its detail contains). A field
    left out matches anything; a pattern names at least one. ``"any"`` (:attr:`anything`) matches every failure: for
    a row whose one root cause breaks its tests in every way (its caller's inputs rewritten), declared as a breakage
    whose reason says so."""

    __pydantic_config__ = FORBID  # a declaration's cause is read at the door (conformance/data/datafiles.py)

    exception: str | None = None
    message: str | None = None
    observable: str | None = None
    detail: str | None = None
    anything: bool = False

    def __post_init__(self):
        if self.anything:
            return
        if not any((self.exception, self.message, self.observable, self.detail)):
            raise ValueError("a cause names an exception, a message, an observable or a detail")
        if (self.exception or self.message) and (self.observable or self.detail):
            raise ValueError("a cause is an exception (exception, message) or a difference (observable, detail), not both")
        for regex in (self.message, self.detail):
            if regex is not None:
                try:
                    re.compile(regex)
                except re.error as bad:
                    raise ValueError(f"{regex!r} is not a regular expression: {bad}") from None

    @property
    def kind(self) -> str:
        return "exception" if (self.exception or self.message) else "difference"

    def matches(self, cause: Cause) -> bool:
        if self.anything:
            return True
        if cause.kind != self.kind:
            return False
        name, text = (self.exception, self.message) if self.kind == "exception" else (self.observable, self.detail)
        return (name is None or name in (cause.name, *cause.bases)) and (text is None or re.search(text, cause.detail) is not None)

    def __str__(self) -> str:
        if self.anything:
            return "any failure"
        name, text = (self.exception, self.message) if self.kind == "exception" else (self.observable, self.detail)
        return f"{name or 'any ' + self.kind}" + (f" /{text}/" if text else "")

    def to_toml(self) -> str:
        """The pattern as a declaration writes it (an inline table, or "any")."""
        if self.anything:
            return '"any"'
        fields = [(k, v) for k, v in (("exception", self.exception), ("message", self.message),
                                      ("observable", self.observable), ("detail", self.detail)) if v is not None]
        return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in fields) + " }"  # JSON strings are TOML basic strings

    @classmethod
    def describing(cls, cause: Cause) -> "Pattern":
        """A pattern for declaring a cause that every failure of its signature matches: an exception's type (a
        difference's observable) and, where its text says what failed, the start of its message with what varies
        from test to test (numbers, quoted names, index lists, addresses) matched by any value."""
        text = cause.detail if cause.kind == "exception" or cause.name in ("exception", "exception-type") else ""
        regex = _pattern_of(_masked(text)) if text else None
        if cause.kind == "exception":
            return cls(exception=cause.name, message=regex)
        return cls(observable=cause.name, detail=regex)

    @classmethod
    def parse(cls, entry) -> tuple["Pattern", ...]:
        """A declaration's ``failure``: one table or a list of them, or ``"any"``."""
        if entry == "any":
            return (cls(anything=True),)
        entries = entry if isinstance(entry, list) else [entry]
        return tuple(cls(**e) for e in entries)


# The order in which one difference explains another: a different RNG stream makes different values, a
# different forward value makes different gradients. A failure's root cause is its first difference in this
# order (then in the order found); an exception comes first.
ROOT_ORDER = ("exception", "exception-type", "rng", "state", "objects", "result", "requires-grad", "aliasing",
              "gradient-presence", "zero-gradient-for-none", "gradients", "warnings")


def root(causes) -> Cause | None:
    """The cause that explains the others of one failure (ROOT_ORDER), None where there is none."""
    def rank(cause: Cause) -> int:
        if cause.kind == "exception":
            return -1
        return ROOT_ORDER.index(cause.name) if cause.name in ROOT_ORDER else len(ROOT_ORDER)
    return min(causes, key=rank, default=None)


# What a step that raised did not produce: its result, the gradients it would have left and the hooks it would
# have fired. A difference in these at the step of an exception difference is that exception's consequence, not
# a cause of its own.
UNPRODUCED = ("result", "requires-grad", "aliasing", "gradient-presence", "zero-gradient-for-none", "gradients", "hooks")


def unmatched(causes, patterns) -> list[Cause]:
    """The causes none of the patterns matches, the consequences of a matched exception left out: what its step did
    not produce (UNPRODUCED, and the random draws it did not make), and what the program's later steps, run on what it did not produce, did not produce or
    raised (a backward of the None a failed call returned). A later step's other differences (the RNG stream, global
    state, lifetimes, warnings) stay causes of their own."""
    matched = [c for c in causes if any(p.matches(c) for p in patterns)]
    raised = {c.step for c in matched if c.kind == "difference" and c.name in ("exception", "exception-type") and c.step is not None}

    def consequence(c: Cause) -> bool:
        if c.step is None or not raised:
            return False
        later = c.step > min(raised) and c.name in (*UNPRODUCED, "exception", "exception-type")
        return (c.step in raised and c.name in (*UNPRODUCED, "rng")) or later  # the draws it did not make

    return [c for c in causes if c not in matched and not consequence(c)]


def patterns_explaining(causes) -> list[Pattern]:
    """Patterns that explain a failure: its root cause's, then the root's of what they leave unexplained (the
    consequences of a declared exception are not causes of their own), until nothing is left."""
    patterns, left = [], list(causes)
    while left:
        patterns.append(Pattern.describing(root(left)))
        left = unmatched(left, patterns)
    return patterns
