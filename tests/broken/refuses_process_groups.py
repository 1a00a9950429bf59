"""Cannot run under a process group (it raises once torch.distributed is initialized), and says so: it
does not claim the "distributed" feature, so the distributed area reads *unsupported*, with its error.
Everything else is torch's."""

import torch.distributed as dist
from torch.utils.checkpoint import CheckpointError, checkpoint_sequential  # noqa: F401
from torch.utils.checkpoint import checkpoint as _checkpoint

from conformance.data.capabilities import FEATURES

__conformance__ = {"capabilities": {"features": [f for f in FEATURES if f != "distributed"]}}
REFUSAL = "this implementation keeps per-process state that a process group would share"


def checkpoint(function, *args, **kwargs):
    if dist.is_available() and dist.is_initialized():
        raise RuntimeError(REFUSAL)
    return _checkpoint(function, *args, **kwargs)
