"""torch's checkpoint with two bugs under one clause (api.forward-value), for the self-test of declarations
that name their cause (tests/unit/test_causes.py): a dict output is refused with a TypeError (the bug a declaration
is written for), and a float16 output comes back as float32 (a second bug nobody declared)."""

import torch
import torch.utils.checkpoint
from torch.utils.checkpoint import CheckpointError, checkpoint_sequential  # noqa: F401
from torch.utils.checkpoint import checkpoint as _checkpoint


def checkpoint(function, *args, **kwargs):
    output = _checkpoint(function, *args, **kwargs)
    if isinstance(output, dict):
        raise TypeError("dict outputs are not supported by this checkpoint")
    if isinstance(output, torch.Tensor) and output.dtype == torch.float16:
        return output.float()
    return output


def __getattr__(name):  # the rest of the API is torch's, unchanged
    return getattr(torch.utils.checkpoint, name)
