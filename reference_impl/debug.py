"""debug=True: log the operators the forward and the recompute ran, to explain a mismatch."""

from __future__ import annotations

import os
import traceback

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_STACK_DEPTH = 8  # innermost Python frames kept per operator: enough to find the user's line
_INTERNAL = (os.path.dirname(torch.__file__), __file__)


def _caller_stack() -> str:
    """The innermost frames outside torch and this module: where the operator was called from."""
    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(_INTERNAL):
        frames.pop()
    return "".join(traceback.format_list(frames[-_STACK_DEPTH:]))


class OpLog(TorchDispatchMode):
    """A dispatch mode that records each aten operator run under it, with where it was called."""

    def __init__(self):
        super().__init__()
        self.entries: list[tuple[str, str]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.entries.append((str(func), _caller_stack()))
        return func(*args, **(kwargs or {}))

    def render(self, title: str) -> str:
        lines = [f"{title} ({len(self.entries)} operators):"]
        lines += [f"  {i}: {name}" for i, (name, _) in enumerate(self.entries)]
        lines.append(f"Stack traces of {title.lower()}:")
        lines += [f"  {i}: {name}\n{stack}" for i, (name, stack) in enumerate(self.entries)]
        return "\n".join(lines)


def explain(message: str, forward: OpLog, recompute: OpLog) -> str:
    """The error message of a debug=True checkpoint: the error, then both operator logs."""
    return "\n\n".join(
        [
            f"An error happened while unpacking tensors; logs of the latest computation follow.\n{message}",
            forward.render("Operations executed during the original forward"),
            recompute.render("Operations executed during recomputation"),
            "You are seeing these logs because you passed `debug=True` to checkpoint "
            "(or enabled set_checkpoint_debug_enabled).",
        ]
    )
