"""Checkpoints correctly, and tags each output tensor with a record of its region (inputs and outputs)."""

import torch
import torch.utils.checkpoint as _torch
from torch.utils._pytree import tree_leaves

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["memory.freed-without-collector"]
BREAKS = "a back-reference from each output to a record holding it and the inputs: a reference cycle that only " \
         "the garbage collector frees once the caller drops the outputs"


def checkpoint(function, *args, **kwargs):
    outputs = _torch.checkpoint(function, *args, **kwargs)
    region = {"inputs": args, "outputs": outputs}
    for tensor in tree_leaves(outputs):
        if isinstance(tensor, torch.Tensor):
            tensor.checkpoint_region = region
    return outputs
