"""Non-reentrant: never compares the recomputed tensors' metadata."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["determinism.default-detects"]
BREAKS = "determinism_check='default' behaves like 'none': a different shape or dtype goes unnoticed"


def checkpoint(function, *args, **kwargs):
    kwargs["determinism_check"] = "none"
    return _torch.checkpoint(function, *args, **kwargs)
