"""Non-reentrant: debug=True is accepted but adds nothing to error messages."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["debug.trace-in-errors"]
BREAKS = "debug=True does not add the operator trace to checkpoint errors"


def checkpoint(function, *args, debug=False, **kwargs):
    return _torch.checkpoint(function, *args, **kwargs)
