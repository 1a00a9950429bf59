"""Parks the caller's floating-point input tensors from the forward until backward, as DeepSpeed's
``checkpoint_in_cpu`` does: after the call each one's ``.data`` is a 0-d placeholder, given back when
backward reaches the region (deepspeedai/DeepSpeed#6969: inputs "changed to scalars" after a block's
forward). Right after the call, and for a residual connection that reuses the inputs before backward,
they are wrong; after backward they are right again."""

import torch

from tests.mutants._support.call_wrappers import before_backward
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["inputs.unchanged"]
BREAKS = "the caller's floating-point inputs are 0-d placeholders from the forward until backward"


def checkpoint(function, *args, **kwargs):
    out = _checkpoint(function, *args, **kwargs)
    parked = [(a, a.data) for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()]
    for arg, _ in parked:
        arg.data = torch.empty((), dtype=arg.dtype)

    def give_back():
        for arg, data in parked:
            arg.data = data

    return before_backward(out, give_back)
