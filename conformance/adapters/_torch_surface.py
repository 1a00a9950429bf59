"""torch's module-level checkpoint helpers, for adapters built on torch.utils.checkpoint: its global
switches, selective checkpointing and GraphExecGroup apply to what these adapters call, so each
re-exports them (`from conformance.adapters._torch_surface import *`)."""

from torch.utils.checkpoint import (
    CheckpointError,
    CheckpointPolicy,
    GraphExecGroup,
    create_selective_checkpoint_contexts,
    set_checkpoint_debug_enabled,
    set_checkpoint_early_stop,
)

__all__ = [
    "CheckpointError",
    "CheckpointPolicy",
    "GraphExecGroup",
    "create_selective_checkpoint_contexts",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
]
