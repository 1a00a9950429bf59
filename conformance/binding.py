"""Binds ``--impl`` to an implementation of the ``torch.utils.checkpoint`` API.

This is the only module that knows how an implementation is found. ``--impl`` is either a short
adapter name (a module in ``conformance/adapters/``, e.g. ``fairscale``) or any importable dotted
module that exposes ``checkpoint`` and ``checkpoint_sequential`` (and optionally ``CheckpointError``
and ``CONFORMANCE_CAPABILITIES``). Tests never call the module directly: they get a
:class:`Checkpointer`, bound to one variant, that always passes ``use_reentrant`` explicitly.

An implementation has one canonical id, whatever spelling selected it (conformance/ids.py, which the
report and the expectations import without this module).
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from importlib import metadata
from types import ModuleType

from conformance.capabilities import Capabilities, CapabilityError, read_capabilities
from conformance.ids import ADAPTERS_PACKAGE, DEFAULT_IMPL, ID_ATTRIBUTE, canonical_id
from conformance.vocabulary import CHECKPOINT_ERROR_FALLBACK, OPTIONAL_NAMES, REQUIRED_NAMES

__all__ = ["DEFAULT_IMPL", "BindingError", "Checkpointer", "Implementation", "load_implementation", "module_version"]


class BindingError(Exception):
    """--impl cannot be used; the message is one line, fit for a usage error."""


@dataclass(frozen=True)
class Implementation:
    id: str  # canonical: the same whatever spelling of --impl selected it
    module: ModuleType
    capabilities: Capabilities

    @property
    def name(self) -> str:
        """What people call it (an adapter's NAME, e.g. the third-party API it maps), for display."""
        return str(getattr(self.module, "NAME", self.id))

    @property
    def version(self) -> str:
        return module_version(self.module)

    def take_notes(self) -> list[str]:
        """What the implementation noted since the last call (its optional ``conformance_notes()``), e.g. a
        compiled row's graph breaks: the harness records them with the test's result."""
        take = getattr(self.module, "conformance_notes", None)
        return [str(note) for note in take()] if callable(take) else []

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
    try:
        capabilities = read_capabilities(module)
    except CapabilityError as exc:
        raise BindingError(f"--impl={name}: {exc}") from None
    return Implementation(id=str(getattr(module, ID_ATTRIBUTE, None) or canonical_id(module.__name__)),
                          module=module, capabilities=capabilities)


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
