"""A float64 function's output comes back in float32 (a checkpoint that casts outputs to the default dtype)."""

import torch

from tests.mutants._support.call_wrappers import map_tensors
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.forward-value"]
BREAKS = "float64 outputs are returned as float32"


def checkpoint(function, *args, **kwargs):
    out = _checkpoint(function, *args, **kwargs)
    return map_tensors(out, lambda t: t.float() if t.dtype == torch.float64 else t)
