"""Reentrant: debug=True is silently dropped."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["debug.reentrant-rejects"]
BREAKS = "use_reentrant=True accepts debug=True silently"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant:
        kwargs.pop("debug", None)
    return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
