"""Reentrant: checks that the recompute's outputs have the forward's shapes and dtypes."""

import torch
import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["determinism.reentrant-disabled"]
BREAKS = "use_reentrant=True raises CheckpointError when the recompute's metadata differs"


def _metadata(outputs):
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    return [(o.shape, o.dtype, o.device) for o in outputs if isinstance(o, torch.Tensor)]


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if not use_reentrant:
        return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    seen = []

    def checked(*inner_args):
        outputs = function(*inner_args)
        seen.append(_metadata(outputs))
        if len(seen) > 1 and seen[-1] != seen[0]:  # the recompute
            raise CheckpointError(f"recomputed metadata {seen[-1]} differs from the forward's {seen[0]}")  # noqa: F405
        return outputs

    return _torch.checkpoint(checked, *args, use_reentrant=True, **kwargs)
