"""Under torch.no_grad() or inference_mode (the plain-forward shortcut), a 1-tuple output comes back
as its lone tensor."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["callers.no-grad", "callers.inference-mode"]
BREAKS = "with grad off, a function's 1-tuple output is unpacked"


def checkpoint(function, *args, **kwargs):
    out = _checkpoint(function, *args, **kwargs)
    if not torch.is_grad_enabled() and isinstance(out, tuple) and len(out) == 1:
        return out[0]
    return out
