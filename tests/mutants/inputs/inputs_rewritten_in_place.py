"""Rewrites the caller's inputs that do not require grad in place after the forward (flattens their
``.data``), as DeepSpeed's partition_activations does: flags and dtype stay, shape and layout do not."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["inputs.unchanged"]
BREAKS = "inputs that do not require grad come back flattened"


def checkpoint(function, *args, **kwargs):
    out = _checkpoint(function, *args, **kwargs)
    for arg in args:
        if isinstance(arg, torch.Tensor) and not arg.requires_grad and arg.is_floating_point():
            arg.data = arg.data.reshape(-1)
    return out
