"""When no tensor argument requires grad, makes every floating-point output that does not require grad
require it (with grad mode on), so the region always takes part in autograd (OpenBMB/BMTrain#8: "always
requires_grad in checkpointing block"). The outputs of a frozen block then require grad although nothing
the function read does, unlike the function's own output (pytorch/pytorch#7617). Made leaves, they cost
no backward of the region, so a head after it still trains."""

import torch

from tests.mutants._support.call_wrappers import map_tensors
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["reqgrad.frozen-block-output"]
BREAKS = "outputs of a region where nothing requires grad come back requiring grad"


def checkpoint(function, *args, **kwargs):
    out = _checkpoint(function, *args, **kwargs)
    arguments = [a for a in args if isinstance(a, torch.Tensor)]
    if not torch.is_grad_enabled() or any(a.requires_grad for a in arguments):
        return out  # only regions whose inputs are frozen: the outputs of the others are left alone

    def forced(t):
        if t.is_floating_point() and not t.requires_grad and not any(t is a for a in arguments):
            t.requires_grad_()
        return t

    return map_tensors(out, forced)
