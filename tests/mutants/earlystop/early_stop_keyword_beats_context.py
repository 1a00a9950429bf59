"""An explicit early_stop argument wins over the set_checkpoint_early_stop context manager."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["earlystop.context-manager-overrides"]
BREAKS = "the early_stop argument takes precedence over set_checkpoint_early_stop"


def checkpoint(function, *args, **kwargs):
    if "early_stop" not in kwargs:
        return _torch.checkpoint(function, *args, **kwargs)
    # torch's innermost manager wins, so re-entering it with the argument's value overrides the caller's.
    with _torch.set_checkpoint_early_stop(kwargs["early_stop"]):
        return _torch.checkpoint(function, *args, **kwargs)
