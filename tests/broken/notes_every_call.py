"""torch's checkpoint, noting each call through the harness's optional ``notes`` hook
(as the compiled rows note graph breaks), and noting once at import (before any test: not a test's)."""

import torch
import torch.utils.checkpoint
from torch.utils.checkpoint import CheckpointError, checkpoint_sequential  # noqa: F401
from torch.utils.checkpoint import checkpoint as _checkpoint

_notes = ["imported"]


def checkpoint(function, *args, **kwargs):
    _notes.append(f"checkpoint called with use_reentrant={kwargs.get('use_reentrant')}")
    return _checkpoint(function, *args, **kwargs)


def take_notes():
    taken = list(_notes)
    _notes.clear()
    return taken


__conformance__ = {"notes": take_notes}


def __getattr__(name):  # the rest of the API is torch's, unchanged
    return getattr(torch.utils.checkpoint, name)
