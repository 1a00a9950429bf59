"""View arguments are copied (differentiably) before the region runs, so the graph keeps the copies
alive instead of the tensors passed: values and gradients are right, the memory promise is not."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["memory.only-inputs-saved"]
BREAKS = "views passed as arguments are saved as copies, not as the tensors passed"


def checkpoint(function, *args, **kwargs):
    args = [a.clone() if isinstance(a, torch.Tensor) and a._is_view() else a for a in args]
    return _checkpoint(function, *args, **kwargs)
