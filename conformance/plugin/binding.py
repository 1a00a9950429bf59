"""Binds ``--impl`` to an implementation of the ``torch.utils.checkpoint`` API.

This is the only module that knows how an implementation is found, and the only one that reads what it says of
itself. ``--impl`` is either a short adapter name (a module in ``conformance/adapters/``, e.g. ``fairscale``) or any
importable dotted module that exposes ``checkpoint`` and ``checkpoint_sequential`` (and optionally
``CheckpointError`` and the helpers of vocabulary.OPTIONAL_NAMES). What the module says of itself to the harness is
one optional object, :data:`PROTOCOL`, every key optional (docs/IMPLEMENTING.md)::

    __conformance__ = {
        "id": "mypkg",                 # its canonical id (default: the module's name; an adapter's: its short name)
        "name": "MyPkg checkpoint",    # what people call it, for display (default: the id)
        "capabilities": {...},         # the variants, features and devices it claims (conformance/data/capabilities.py)
        "fixed_draws": True,           # False: its code differs under a re-run with fixed draws (conformance/plugin/rerun.py)
        "notes": take_notes,           # a callable: what it noted since the last call (each test's record keeps them)
    }

It is checked at the door (an unknown key fails, naming it). Tests never call the module directly: they get a
:class:`Checkpointer`, bound to one variant, that always passes ``use_reentrant`` explicitly.

An implementation has one canonical id, whatever spelling selected it (conformance/data/ids.py, which the
report and the expectations import without this module).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from types import ModuleType

from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12

from pydantic import with_config

from conformance.data.capabilities import Capabilities, CapabilityError, read_capabilities
from conformance.data.datafiles import FORBID, DataFileError, validated
from conformance.data.ids import ADAPTERS_PACKAGE, DEFAULT_IMPL, canonical_id
from conformance.data.vocabulary import CHECKPOINT_ERROR_FALLBACK, OPTIONAL_NAMES, REQUIRED_NAMES

PROTOCOL = "__conformance__"  # the one attribute the harness reads of an implementation module, besides its API
# The attributes it replaces: a module that still has one is told where its value goes now.
_REPLACED = {"CONFORMANCE_CAPABILITIES": "capabilities", "CONFORMANCE_ID": "id", "CONFORMANCE_FIXED_DRAWS": "fixed_draws",
             "conformance_notes": "notes"}


@with_config(FORBID)
class Protocol(TypedDict, total=False):
    """What an implementation module says of itself (its ``__conformance__``); every key optional."""

    id: str
    name: str
    capabilities: dict[str, list[str]]
    fixed_draws: bool
    notes: Callable[[], list]

__all__ = ["DEFAULT_IMPL", "BindingError", "Checkpointer", "Implementation", "load_implementation", "module_version"]


class BindingError(Exception):
    """--impl cannot be used; the message is one line, fit for a usage error."""


@dataclass(frozen=True)
class Implementation:
    id: str  # canonical: the same whatever spelling of --impl selected it
    module: ModuleType
    capabilities: Capabilities
    name: str  # what people call it (an adapter's: the third-party API it maps), for display
    fixed_draws: bool = True  # whether a re-run with fixed draws runs its code as the run did (conformance/plugin/rerun.py)
    notes: Callable[[], list] | None = None

    @property
    def version(self) -> str:
        return module_version(self.module)

    def take_notes(self) -> list[str]:
        """What the implementation noted since the last call (its protocol's ``notes``), e.g. a compiled row's graph
        breaks: the harness records them with the test's result."""
        return [str(note) for note in self.notes()] if self.notes else []

    @property
    def checkpoint_error(self) -> type[BaseException] | None:
        return getattr(self.module, "CheckpointError", None)


def _resolve_module_name(name: str) -> str:
    if "." not in name and importlib.util.find_spec(f"{ADAPTERS_PACKAGE}.{name}") is not None:
        return f"{ADAPTERS_PACKAGE}.{name}"
    return name


def load_implementation(name: str) -> Implementation:
    module_name = _resolve_module_name(name)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import failure is the user's module's, reported in one line
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
        raise BindingError(f"--impl={name}: cannot import module {module_name!r} ({reason})") from None
    missing = [attr for attr in REQUIRED_NAMES if not callable(getattr(module, attr, None))]
    if missing:
        raise BindingError(
            f"--impl={name}: module {module_name!r} lacks {', '.join(missing)}; an implementation must "
            "provide checkpoint(function, *args, use_reentrant=..., **kwargs) and "
            "checkpoint_sequential(functions, segments, input, use_reentrant=..., **kwargs) "
            "(see docs/IMPLEMENTING.md)"
        )
    replaced = [f"{attribute} (now {PROTOCOL}[{key!r}])" for attribute, key in _REPLACED.items() if hasattr(module, attribute)]
    if replaced:
        raise BindingError(f"--impl={name}: module {module_name!r} says what it is through {', '.join(replaced)}: "
                           f"the harness reads one object, {PROTOCOL} (docs/IMPLEMENTING.md)")
    try:
        said = validated(Protocol, getattr(module, PROTOCOL, {}), where=f"{module_name}.{PROTOCOL}")
        capabilities = read_capabilities(module, said.get("capabilities"))
    except (DataFileError, CapabilityError) as exc:
        raise BindingError(f"--impl={name}: {exc}") from None
    implementation_id = said.get("id") or canonical_id(module.__name__)
    return Implementation(id=implementation_id, module=module, capabilities=capabilities,
                          name=said.get("name", implementation_id), fixed_draws=said.get("fixed_draws", True),
                          notes=said.get("notes"))


def module_version(module: ModuleType) -> str:
    """The module's own __version__, else its distribution's, else its top package's."""
    version = getattr(module, "__version__", None)
    top = module.__name__.split(".")[0]
    if version is None:
        try:
            version = metadata.version(top)
        except metadata.PackageNotFoundError:
            version = getattr(importlib.import_module(top), "__version__", "unknown")
    return str(version)


@dataclass(frozen=True)
class Checkpointer:
    """The implementation under test bound to one variant. Every call passes use_reentrant."""

    impl: Implementation
    variant: str  # "reentrant" | "non_reentrant"

    @property
    def use_reentrant(self) -> bool:
        return self.variant == "reentrant"

    @property
    def CheckpointError(self) -> type[BaseException]:
        # Where an implementation has no CheckpointError, RuntimeError is its documented base.
        return self.impl.checkpoint_error or CHECKPOINT_ERROR_FALLBACK

    def __repr__(self):  # short: hypothesis prints it in every falsifying example
        return f"Checkpointer({self.impl.id!r}, {self.variant!r})"

    def checkpoint(self, function, *args, **kwargs):
        return self.impl.module.checkpoint(function, *args, use_reentrant=self.use_reentrant, **kwargs)

    def sequential(self, functions, segments, input, **kwargs):
        return self.impl.module.checkpoint_sequential(
            functions, segments, input, use_reentrant=self.use_reentrant, **kwargs
        )

    def __getattr__(self, name):
        # Module-level helpers of the implementation (set_checkpoint_early_stop, ...).
        try:
            return getattr(self.impl.module, name)
        except AttributeError:
            if name not in OPTIONAL_NAMES:
                raise
            raise AttributeError(f"{self.impl.id} does not provide {name} (part of the optional feature "
                                 f"{OPTIONAL_NAMES[name]!r})") from None
