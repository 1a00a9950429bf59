"""Gives the caller's input tensors back as contiguous copies when backward reaches the region, as
DeepSpeed's ``partition_activations`` does when it gathers the inputs it partitioned (the caller's
tensors are overwritten with the gathered data: deepspeedai/DeepSpeed#3857, "modifies input tensor shape
which cannot be reused"). Values and shapes stay right; a transposed, sliced or channels_last input
loses its strides, and only after backward."""

import torch

from tests.mutants._support.call_wrappers import before_backward
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["inputs.unchanged"]
BREAKS = "after backward the caller's non-contiguous inputs are contiguous (their strides changed)"


def checkpoint(function, *args, **kwargs):
    inputs = [a for a in args if isinstance(a, torch.Tensor)]

    def gather_contiguous():
        for t in inputs:
            if not t.is_contiguous():
                t.data = t.data.contiguous()

    return before_backward(_checkpoint(function, *args, **kwargs), gather_contiguous)
