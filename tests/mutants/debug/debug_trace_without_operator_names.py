"""Non-reentrant: the debug trace keeps the stack traces of the forward and the recomputation but names none of
their operators (each aten operator shows as `aten.<op>`), so the error shows where code ran, not which
operators ran. Built on a private copy of torch.utils.checkpoint whose CheckpointError scrubs the names; torch
itself is untouched."""

import importlib.util
import re

import torch.utils.checkpoint as _torch

_spec = importlib.util.spec_from_file_location("_checkpoint_trace_without_ops", _torch.__file__)
_copy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_copy)

TARGET_CLAUSES = ["debug.trace-in-errors"]
BREAKS = "debug errors show stack traces but name no operator of the forward or the recomputation"


class CheckpointError(_copy.CheckpointError):
    def __init__(self, message=""):
        super().__init__(re.sub(r"aten\.\w+(\.\w+)?", "aten.<op>", str(message)))


_copy.CheckpointError = CheckpointError
checkpoint = _copy.checkpoint
checkpoint_sequential = _copy.checkpoint_sequential
set_checkpoint_debug_enabled = _copy.set_checkpoint_debug_enabled
set_checkpoint_early_stop = _copy.set_checkpoint_early_stop
