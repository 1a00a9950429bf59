"""A float64 function's output comes back in float32 (a checkpoint that casts outputs to the default dtype)."""

import torch

from tests.mutants._call_wrappers import map_tensors
from tests.mutants._torch_based import CheckpointError, checkpoint_sequential  # noqa: F401
from tests.mutants._torch_based import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.forward-value"]
BREAKS = "float64 outputs are returned as float32"


def checkpoint(function, *args, **kwargs):
    out = _checkpoint(function, *args, **kwargs)
    return map_tensors(out, lambda t: t.float() if t.dtype == torch.float64 else t)
