"""Kills its own process (SIGKILL, no cleanup, no traceback) when the reentrant variant is called
with no input that requires grad; every other call is torch's."""

import os
import signal

import torch
import torch.utils.checkpoint
from torch.utils.checkpoint import CheckpointError, checkpoint_sequential  # noqa: F401
from torch.utils.checkpoint import checkpoint as _checkpoint


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant and not any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
        os.kill(os.getpid(), signal.SIGKILL)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


def __getattr__(name):  # the rest of the API (early stop, debug, SAC, ...) is torch's, unchanged
    return getattr(torch.utils.checkpoint, name)
