"""Non-reentrant: early_stop passed explicitly disables early stop whatever its value."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["earlystop.default-stops"]
BREAKS = "early_stop=True given explicitly recomputes the whole function"


def checkpoint(function, *args, **kwargs):
    if "early_stop" in kwargs:
        kwargs["early_stop"] = False
    return _torch.checkpoint(function, *args, **kwargs)
