"""The door of every data file the harness reads: ``clauses.toml``, ``expectations.toml``, ``findings.toml`` and the
results JSON are each checked against the typed model of what they hold (pydantic, over the harness's own dataclasses)
as they are loaded. A misspelt or unknown key, a missing field or a value of the wrong kind fails at load, and the
error names the file, the entry and the field, before anything the file says is acted on.

A model is the dataclass its entries become; it opts into the door by forbidding unknown keys
(``__pydantic_config__ = FORBID``). Checks that span entries or files (a clause's area is one the file declares, a
declaration names known clauses) stay with the module that owns the data.

Plain data: it imports pydantic and nothing of the harness.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, ConfigDict, TypeAdapter, ValidationError

FORBID = ConfigDict(extra="forbid")  # a model's config: an unknown key is an error, never ignored

# Field types the data files share.
Stripped = Annotated[str, AfterValidator(str.strip)]  # a TOML multi-line string, its surrounding blank lines dropped
# A field that names one thing or several ("impl", "clauses", "test"): a string or a list, always a tuple once read.
Names = Annotated[tuple[str, ...], BeforeValidator(lambda value: (value,) if isinstance(value, str) else value)]


class DataFileError(ValueError):
    """A data file does not hold what its model says: the message names the file, the entry and the field."""


@cache
def _adapter(model) -> TypeAdapter:
    return TypeAdapter(model)


def validated(model, data: Any, *, where: str):
    """``data`` as a ``model``; else a :class:`DataFileError` saying, for each problem, ``where`` and the field."""
    try:
        return _adapter(model).validate_python(data)
    except ValidationError as bad:
        raise DataFileError(f"{where}: " + "; ".join(_problem(error) for error in bad.errors())) from None


def _problem(error: dict) -> str:
    field = ".".join(str(part) for part in error["loc"]) or "(the entry)"
    if error["type"] in ("unexpected_keyword_argument", "extra_forbidden"):
        return f"unknown field {field!r}"
    if error["type"] == "missing_argument" or error["type"] == "missing":
        return f"field {field!r} is missing"
    return f"field {field!r}: {error['msg']}"


def read_toml(path: Path, tables: tuple[str, ...]) -> dict[str, list[dict]]:
    """A TOML file of arrays of tables, each of ``tables`` a list (empty where absent); a syntax error, a top-level key
    that is none of ``tables`` or one that is not an array of tables fails, naming the file."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise DataFileError(f"{path}: not valid TOML: {exc}") from None
    unknown = [key for key in data if key not in tables]
    if unknown:
        raise DataFileError(f"{path}: unknown table(s) {', '.join(f'[[{k}]]' for k in unknown)}; "
                            f"this file holds {', '.join(f'[[{t}]]' for t in tables)}")
    malformed = [t for t in tables if not isinstance(data.get(t, []), list)]
    if malformed:
        raise DataFileError(f"{path}: {', '.join(malformed)} must be written [[{malformed[0]}]] (an array of tables)")
    return {table: data.get(table, []) for table in tables}


def entries(path: Path, table: str, raw: list[dict], model, *, name) -> list:
    """Each ``[[table]]`` entry of a file as a ``model``, named in an error by its position and ``name(entry)``."""
    return [validated(model, entry, where=f"{path}: [[{table}]] #{index} ({name(entry)})")
            for index, entry in enumerate(raw, start=1)]


def schema(model) -> dict:
    """The JSON Schema of what a model reads (the published results schema is one)."""
    return _adapter(model).json_schema()
