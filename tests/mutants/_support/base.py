"""torch's whole checkpoint surface, for mutants of the optional features (early stop, debug,
context_fn, selective checkpointing): `from tests.mutants._support.base import *`, then override
the one name that is broken."""

from torch.utils.checkpoint import (  # noqa: F401  (re-exported for mutants)
    CheckpointError,
    CheckpointPolicy,
    GraphExecGroup,
    checkpoint,
    checkpoint_sequential,
    create_selective_checkpoint_contexts,
    set_checkpoint_debug_enabled,
    set_checkpoint_early_stop,
)

__all__ = [
    "CheckpointError",
    "CheckpointPolicy",
    "GraphExecGroup",
    "checkpoint",
    "checkpoint_sequential",
    "create_selective_checkpoint_contexts",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
]
