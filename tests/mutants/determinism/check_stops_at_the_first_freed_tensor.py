"""Non-reentrant: the determinism check stops at the first saved tensor autograd has already freed, so a
metadata change in a tensor saved after it (one a later backward through another output needs) goes unchecked.
Built on a private copy of torch.utils.checkpoint whose check breaks where torch's continues; torch itself is
untouched."""

import types

import torch.utils.checkpoint as _torch

_source = open(_torch.__file__).read()
_CHECKED = "            if holder is None:\n                continue\n"
assert _CHECKED in _source, "torch's determinism check changed: this mutant needs updating"
_copy = types.ModuleType("_checkpoint_check_stops_at_a_freed_tensor")
_copy.__file__ = _torch.__file__
exec(compile(_source.replace(_CHECKED, "            if holder is None:\n                break\n"), _torch.__file__, "exec"),
     _copy.__dict__)

TARGET_CLAUSES = ["determinism.default-detects"]
BREAKS = "a changed tensor saved after one already freed is not compared: no CheckpointError"

CheckpointError = _copy.CheckpointError
checkpoint = _copy.checkpoint
checkpoint_sequential = _copy.checkpoint_sequential
set_checkpoint_debug_enabled = _copy.set_checkpoint_debug_enabled
set_checkpoint_early_stop = _copy.set_checkpoint_early_stop
