"""Replays whether autocast was on in the forward, but not its dtype: the recompute runs under autocast's
default dtype (bfloat16 on the CPU) whatever dtype the forward's autocast region chose. torch had this
bug for CUDA bfloat16 regions recomputed in float16 (pytorch/pytorch#71124, fixed by #71169), and
FairScale's checkpoint still re-enters `torch.cuda.amp.autocast()` with the default dtype
(facebookresearch/fairscale#1199)."""

import torch

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["autocast.recompute-under-forward-state"]
BREAKS = "the recompute of a float16 autocast region runs in autocast's default dtype, bfloat16"


# What `torch.autocast("cpu")` without a dtype computes in outside any autocast region, as in backward.
DEFAULT_CPU_AUTOCAST_DTYPE = torch.bfloat16


def _recompute_in_default_dtype(call, function, *args, **kwargs):
    if call == 0:
        return function(*args, **kwargs)
    # torch has already re-entered the forward's autocast state here; keep only its on/off flag.
    with torch.autocast("cpu", dtype=DEFAULT_CPU_AUTOCAST_DTYPE, enabled=torch.is_autocast_enabled("cpu")):
        return function(*args, **kwargs)


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, _recompute_in_default_dtype), *args, **kwargs)
