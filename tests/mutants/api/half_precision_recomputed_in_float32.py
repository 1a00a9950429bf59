"""bfloat16 and float16 regions are recomputed in float32 and the gradients cast back: the forward is
right, the gradients are those of another computation."""

import torch

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "half-precision (bfloat16, float16) regions get gradients of a float32 recompute"

HALF = (torch.bfloat16, torch.float16)


def _recompute_in_float32(call, function, *args, **kwargs):
    if call == 0 or not any(isinstance(a, torch.Tensor) and a.dtype in HALF for a in args):
        return function(*args, **kwargs)
    dtype = next(a.dtype for a in args if isinstance(a, torch.Tensor) and a.dtype in HALF)
    with torch.autocast("cpu", dtype=dtype, enabled=False):
        out = function(*[a.float() if isinstance(a, torch.Tensor) and a.dtype in HALF else a for a in args], **kwargs)
    return out.to(dtype) if isinstance(out, torch.Tensor) else out


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, _recompute_in_float32), *args, **kwargs)
