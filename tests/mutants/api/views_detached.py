"""Arguments that are views of another tensor are detached from their base (a checkpoint that
'materializes' views before stashing them)."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "views of one base passed as arguments get no gradient into the base"


def checkpoint(function, *args, **kwargs):
    args = [a.detach().clone() if isinstance(a, torch.Tensor) and a._is_view() else a for a in args]
    return _checkpoint(function, *args, **kwargs)
