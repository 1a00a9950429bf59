"""Non-reentrant: the debug trace lists only the operators of the original forward; the section on
the recomputation is left out. Built on a private copy of torch.utils.checkpoint whose error template
drops the recomputation, so torch itself is untouched for everything else in the process."""

import importlib.util
import re

import torch.utils.checkpoint as _torch

_spec = importlib.util.spec_from_file_location("_checkpoint_forward_trace_only", _torch.__file__)
_copy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_copy)
_copy._checkpoint_error_template = re.sub(r"\{recompute_(traces|ops)\}", "(omitted)", _copy._checkpoint_error_template)

TARGET_CLAUSES = ["debug.trace-in-errors", "debug.global-override"]
BREAKS = "debug traces name the forward's operators but not the recomputation's"

CheckpointError = _copy.CheckpointError
checkpoint = _copy.checkpoint
checkpoint_sequential = _copy.checkpoint_sequential
set_checkpoint_debug_enabled = _copy.set_checkpoint_debug_enabled
set_checkpoint_early_stop = _copy.set_checkpoint_early_stop
