"""The usual base of a mutant: torch's own implementation, to be broken in exactly one way."""

from torch.utils.checkpoint import (  # noqa: F401  (re-exported for mutants)
    CheckpointError,
    checkpoint,
    checkpoint_sequential,
    set_checkpoint_debug_enabled,
    set_checkpoint_early_stop,
)
