"""Returns a copy of each output that shares memory with an argument, as a checkpoint that clones such
outputs to avoid torch's "a view ... is being modified inplace" error would: values and gradients are
right, but writes through the output no longer reach the argument."""

import torch

from tests.mutants._support.call_wrappers import map_argument_aliases
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["outputs.views-of-inputs"]
BREAKS = "an output that is an argument or a view of one comes back as a copy"


def checkpoint(function, *args, **kwargs):
    return map_argument_aliases(_checkpoint(function, *args, **kwargs), args, torch.Tensor.clone)
