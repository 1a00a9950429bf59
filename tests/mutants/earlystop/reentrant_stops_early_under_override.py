"""Reentrant: under set_checkpoint_early_stop(True) the region is checkpointed by the non-reentrant
machinery, which stops the recompute early; the reentrant variant always recomputes in full."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["earlystop.reentrant-recomputes-all"]
BREAKS = "use_reentrant=True stops the recompute early inside set_checkpoint_early_stop(True)"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant and _torch._enable_checkpoint_early_stop is True:
        use_reentrant = False
    return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
