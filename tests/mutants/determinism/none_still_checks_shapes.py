"""Non-reentrant: determinism_check='none' turns off the dtype comparison but still compares shapes."""

import torch
import torch.utils.checkpoint as _torch
from torch.utils._python_dispatch import TorchDispatchMode

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["determinism.none-disables"]
BREAKS = "with determinism_check='none' a recompute whose tensors change shape still raises CheckpointError"


class _ComparesShapes(TorchDispatchMode):
    """Records the shape of each op's output; given the forward's, raises at the first that differs."""

    def __init__(self, forward_shapes=None):
        super().__init__()
        self.shapes, self.forward_shapes = [], forward_shapes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else None
        index = len(self.shapes)
        self.shapes.append(shape)
        if self.forward_shapes is not None and index < len(self.forward_shapes) and shape != self.forward_shapes[index]:
            raise _torch.CheckpointError(f"recomputed tensor {index} has shape {shape}, the forward's had "
                                         f"{self.forward_shapes[index]}")
        return out


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False and kwargs.get("determinism_check") == "none":
        forward = _ComparesShapes()

        def compared(call, function, *inner_args, **inner_kwargs):
            with forward if call == 0 else _ComparesShapes(forward.shapes):
                return function(*inner_args, **inner_kwargs)

        function = on_calls(function, compared)
    return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
