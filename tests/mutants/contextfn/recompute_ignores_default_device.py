"""Non-reentrant: the recompute runs under backward's default device, not the forward's torch.device(...)."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403
from tests.mutants._support.device_context import device_context_hidden

TARGET_CLAUSES = ["contextfn.default-device-replayed"]
BREAKS = "the torch.device(...) context active in the forward is not re-applied to the recompute"


def checkpoint(function, *args, **kwargs):
    with device_context_hidden():
        return _torch.checkpoint(function, *args, **kwargs)
