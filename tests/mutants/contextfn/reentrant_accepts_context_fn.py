"""Reentrant: a non-default context_fn is silently dropped."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["contextfn.reentrant-rejects"]
BREAKS = "use_reentrant=True accepts a context_fn silently (and never calls it)"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant:
        kwargs.pop("context_fn", None)
    return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
