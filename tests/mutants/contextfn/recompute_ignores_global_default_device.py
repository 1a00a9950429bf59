"""Non-reentrant: replays the default device of a `with torch.device(...)` block, but takes a default
device set with torch.set_default_device(...) for global state that is still in force at backward, so
it is not replayed. It is not: the default device is thread-local, and CUDA runs backward on another
thread (pytorch/pytorch#124788: `torch.set_default_device('cuda')`, then the recompute makes its
tensors on the CPU). On the CPU the suite undoes the default before backward to the same effect."""

import torch
import torch.utils.checkpoint as _torch
from torch.overrides import _get_current_function_mode_stack

from tests.mutants._support.base import *  # noqa: F403
from tests.mutants._support.device_context import device_context_hidden

TARGET_CLAUSES = ["contextfn.default-device-replayed"]
BREAKS = "a default device set with torch.set_default_device is not re-applied to the recompute"


def _global_default_in_force() -> bool:
    global_context = getattr(torch._GLOBAL_DEVICE_CONTEXT, "device_context", None)
    return global_context is not None and global_context in _get_current_function_mode_stack()


def checkpoint(function, *args, **kwargs):
    if not _global_default_in_force():
        return _torch.checkpoint(function, *args, **kwargs)
    with device_context_hidden():
        return _torch.checkpoint(function, *args, **kwargs)
