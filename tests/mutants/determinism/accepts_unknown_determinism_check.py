"""Non-reentrant: an unknown determinism_check silently means 'default'."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["determinism.invalid-rejected"]
BREAKS = "accepts any determinism_check value instead of only 'default' and 'none'"


def checkpoint(function, *args, **kwargs):
    if kwargs.get("determinism_check") not in (None, "default", "none"):
        kwargs["determinism_check"] = "default"
    return _torch.checkpoint(function, *args, **kwargs)
