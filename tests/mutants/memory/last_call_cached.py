"""Checkpoints correctly, and keeps the last call's inputs and outputs in a module-level cache."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["memory.intermediates-freed"]
BREAKS = "a module-level cache of the last call keeps its outputs (and inputs) alive after the caller drops them"

_LAST_CALL = {}


def checkpoint(function, *args, **kwargs):
    outputs = _torch.checkpoint(function, *args, **kwargs)
    _LAST_CALL.update(inputs=args, outputs=outputs)
    return outputs
