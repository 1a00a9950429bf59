"""What an implementation claims to support.

An implementation (or its adapter) may declare, as a module attribute::

    CONFORMANCE_CAPABILITIES = {
        "variants": ["reentrant", "non_reentrant"],   # which use_reentrant values it implements
        "features": ["checkpoint_sequential", ...],    # optional parts of the API, see FEATURES
        "devices": ["cpu", "cuda"],
    }

Omitted keys, or no declaration at all, mean "everything": a drop-in torch.utils.checkpoint
claims the whole contract. Tests of unclaimed parts still run: a failure is reported as
*unsupported*, a pass as *unclaimed but working*, so a declaration is checked both ways.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from conformance.registry import VARIANTS

DEVICES = ("cpu", "cuda")

# Optional parts of the torch.utils.checkpoint API. A clause lists the ones it needs (clauses.toml).
FEATURES = {
    "checkpoint_sequential": "checkpoint_sequential(functions, segments, input, ...)",
    "preserve_rng_state": "the preserve_rng_state keyword and RNG stashing",
    "kwargs": "keyword arguments forwarded to the function (non-reentrant)",
    "context_fn": "the context_fn keyword (non-reentrant)",
    "determinism_check": "the determinism_check keyword and CheckpointError (non-reentrant)",
    "debug": "debug=True and set_checkpoint_debug_enabled (non-reentrant)",
    "early_stop": "early stop: the early_stop keyword and set_checkpoint_early_stop (non-reentrant)",
    "selective_checkpointing": "create_selective_checkpoint_contexts / CheckpointPolicy",
    "use_reentrant_warning": "the warning when use_reentrant is not passed",
    "graph_exec_group": "GraphExecGroup",
    "distributed": "runs inside DistributedDataParallel / FSDP on an initialized process group",
}

ATTRIBUTE = "CONFORMANCE_CAPABILITIES"


class CapabilityError(ValueError):
    """A module's CONFORMANCE_CAPABILITIES names something unknown."""


@dataclass(frozen=True)
class Capabilities:
    variants: frozenset[str] = frozenset(VARIANTS)
    features: frozenset[str] = frozenset(FEATURES)
    devices: frozenset[str] = frozenset(DEVICES)
    declared: bool = False  # False: no declaration, everything is claimed

    def unclaimed(self, *, variant: str | None, device: str | None, features=()) -> list[str]:
        """What a test needs that the implementation does not claim (empty: all claimed)."""
        missing = [f"variant {variant}"] * (variant is not None and variant not in self.variants)
        missing += [f"device {device}"] * (device is not None and device not in self.devices)
        missing += [f"feature {f}" for f in features if f not in self.features]
        return missing


def read_capabilities(module: ModuleType) -> Capabilities:
    declared = getattr(module, ATTRIBUTE, None)
    if declared is None:
        return Capabilities()
    known = {"variants": set(VARIANTS), "features": set(FEATURES), "devices": set(DEVICES)}
    unknown_keys = set(declared) - set(known)
    if unknown_keys:
        raise CapabilityError(f"{ATTRIBUTE} has unknown keys {sorted(unknown_keys)}; use {sorted(known)}")
    values = {}
    for key, allowed in known.items():
        claimed = set(declared.get(key, allowed))
        if not claimed <= allowed:
            raise CapabilityError(f"{ATTRIBUTE}[{key!r}] names unknown {sorted(claimed - allowed)}; known: {sorted(allowed)}")
        values[key] = frozenset(claimed)
    return Capabilities(**values, declared=True)
