"""Non-reentrant: determinism_check='none' still compares the metadata."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["determinism.none-disables"]
BREAKS = "determinism_check='none' does not turn the check off"


def checkpoint(function, *args, **kwargs):
    kwargs.pop("determinism_check", None)
    return _torch.checkpoint(function, *args, **kwargs)
