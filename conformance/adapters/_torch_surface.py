"""torch's module-level checkpoint helpers, for adapters built on torch.utils.checkpoint: its global
switches, selective checkpointing and GraphExecGroup apply to what these adapters call, so each
re-exports them (`from conformance.adapters._torch_surface import *`), those the installed torch has: an
adapter imports on an older torch too (GraphExecGroup is torch 2.10's; the suite skips the clauses a release
predates, `since` in clauses.toml)."""

import torch.utils.checkpoint

NAMES = ("CheckpointError", "CheckpointPolicy", "GraphExecGroup", "create_selective_checkpoint_contexts",
         "set_checkpoint_debug_enabled", "set_checkpoint_early_stop")


def surface(*names: str) -> dict:
    """Those of torch's checkpoint ``names`` the installed torch has, by name."""
    return {name: getattr(torch.utils.checkpoint, name) for name in names if hasattr(torch.utils.checkpoint, name)}


globals().update(surface(*NAMES))
__all__ = list(surface(*NAMES))
