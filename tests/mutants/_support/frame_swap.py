"""Break torch's non-reentrant checkpoint for the calls of one mutant only.

torch builds one `_CheckpointFrame` per non-reentrant call, looking the class up in its module at
call time; `frames_of(cls)` puts a subclass in its place for the duration of one checkpoint call, so
only the regions that mutant creates carry the broken behaviour, into their backward.
"""

import contextlib

import torch.utils.checkpoint as _torch

Frame = _torch._CheckpointFrame


@contextlib.contextmanager
def frames_of(frame_class):
    _torch._CheckpointFrame = frame_class
    try:
        yield
    finally:
        _torch._CheckpointFrame = Frame


def checkpoint_with_frames(frame_class):
    """torch's checkpoint whose non-reentrant regions are built with frame_class."""

    def checkpoint(function, *args, **kwargs):
        with frames_of(frame_class):
            return _torch.checkpoint(function, *args, **kwargs)

    return checkpoint
