"""What an implementation supports: declared by it, or inferred from the names it provides.

An implementation (or its adapter) may declare, in its ``__conformance__`` (conformance/plugin/binding.py)::

    "capabilities": {
        "variants": ["reentrant", "non_reentrant"],   # which use_reentrant values it implements
        "features": ["checkpoint_sequential", ...],    # optional parts of the API (vocabulary.FEATURES)
        "devices": ["cpu", "cuda"],
    }

A declared key wins. An omitted key (or no declaration) is inferred: every variant and device, and
every feature except those whose optional helper the module lacks (vocabulary.OPTIONAL_NAMES: a
module without ``set_checkpoint_early_stop`` does not provide ``early_stop``). Tests of what is not
claimed still run: a failure reads *unsupported*, a pass *unclaimed but working*, so a claim is
checked both ways.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType

from conformance.data.vocabulary import DEVICES, FEATURES, OPTIONAL_NAMES, VARIANTS

class Unsupported(Exception):
    """The implementation's API cannot express this call (a variant, a keyword, preserve_rng_state=False).

    Deliberately not a TypeError, ValueError or RuntimeError (nor NotImplementedError, a RuntimeError):
    a test that expects the contract's error for a bad call (CheckpointError falls back to RuntimeError
    for implementations without one) must not be satisfied by the adapter saying "cannot express".
    """


class CapabilityError(ValueError):
    """A module's declared capabilities name something unknown."""


@dataclass(frozen=True)
class Capabilities:
    variants: frozenset[str] = frozenset(VARIANTS)
    features: frozenset[str] = frozenset(FEATURES)
    devices: frozenset[str] = frozenset(DEVICES)
    declared: tuple[str, ...] = ()  # the keys the module declared; the others were inferred
    not_provided: dict[str, str] = field(default_factory=dict)  # inferred-absent feature -> the missing name

    @property
    def source(self) -> str:
        return "declared" if len(self.declared) == 3 else "declared in part" if self.declared else "inferred"

    def unclaimed(self, *, variant: str | None, device: str | None, features=()) -> list[str]:
        """What a test needs that the implementation does not claim (empty: all claimed), each
        with why: ``"feature early_stop (not provided: set_checkpoint_early_stop)"``."""
        missing = [f"variant {variant}"] * (variant is not None and variant not in self.variants)
        missing += [f"device {device}"] * (device is not None and device not in self.devices)
        for feature in dict.fromkeys(features):
            if feature in self.not_provided:
                missing.append(f"feature {feature} (not provided: {self.not_provided[feature]})")
            elif feature not in self.features:
                missing.append(f"feature {feature}")
        return missing

    def to_json(self) -> dict:
        return {"source": self.source, "declared": list(self.declared), "variants": sorted(self.variants),
                "features": sorted(self.features), "devices": sorted(self.devices),
                "not_provided": dict(self.not_provided)}

    @classmethod
    def from_json(cls, data: dict) -> "Capabilities":
        return cls(frozenset(data["variants"]), frozenset(data["features"]), frozenset(data["devices"]),
                   tuple(data.get("declared", ())), dict(data.get("not_provided", {})))


def read_capabilities(module: ModuleType, declared: dict | None = None) -> Capabilities:
    """What the module claims: ``declared`` (its ``__conformance__["capabilities"]``), the rest inferred."""
    declared = declared or {}
    known = {"variants": set(VARIANTS), "features": set(FEATURES), "devices": set(DEVICES)}
    unknown_keys = set(declared) - set(known)
    if unknown_keys:
        raise CapabilityError(f"capabilities has unknown keys {sorted(unknown_keys)}; use {sorted(known)}")
    values = {}
    for key, allowed in known.items():
        claimed = set(declared.get(key, allowed))
        if not claimed <= allowed:
            raise CapabilityError(f"capabilities[{key!r}] names unknown {sorted(claimed - allowed)}; known: {sorted(allowed)}")
        values[key] = frozenset(claimed)
    not_provided = {}
    if "features" not in declared:
        for name, feature in OPTIONAL_NAMES.items():
            if not hasattr(module, name):
                not_provided.setdefault(feature, name)
        values["features"] = values["features"] - set(not_provided)
    return Capabilities(**values, declared=tuple(k for k in known if k in declared), not_provided=not_provided)
