"""Keeps a flat alias of each tensor argument made with ``.view(-1)``, as DeepSpeed's partition_activations
does to split the inputs it saves into chunks: ``.view`` needs compatible strides, so a transposed, sliced
or channels_last argument fails the call (contiguous ones are unaffected)."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.forward-value", "api.same-gradients"]
BREAKS = "non-contiguous tensor arguments fail: each argument is flattened with .view(-1)"


def checkpoint(function, *args, **kwargs):
    flat = [a.detach().view(-1) for a in args if isinstance(a, torch.Tensor)]  # noqa: F841  (the chunks to partition)
    return _checkpoint(function, *args, **kwargs)
