"""Reentrant: an unsupported option crashes with an AttributeError (a bug on the way to the check)
instead of being rejected as an invalid argument. A rejection test that accepted any exception would
pass it."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["debug.reentrant-rejects", "contextfn.reentrant-rejects", "kwargs.reentrant-rejected"]
BREAKS = "use_reentrant=True with debug, context_fn or function keywords raises AttributeError, not TypeError/ValueError"

_OPTIONS = ("preserve_rng_state", "determinism_check", "early_stop")


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant and (kwargs.get("debug") or "context_fn" in kwargs or set(kwargs) - set(_OPTIONS) - {"debug"}):
        return None.use_reentrant_options  # the crash: AttributeError
    return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
