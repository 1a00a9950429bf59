"""Non-reentrant: a forward context that swallows the function's exception makes checkpoint return None."""

import contextlib

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["contextfn.suppressed-forward-error"]
BREAKS = "when context_fn's forward manager suppresses the function's exception, checkpoint returns None"


def checkpoint(function, *args, use_reentrant=None, context_fn=_torch.noop_context_fn, **kwargs):
    if use_reentrant or context_fn is _torch.noop_context_fn:
        return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, context_fn=context_fn, **kwargs)
    forward_ctx, recompute_ctx = context_fn()
    # The forward manager is entered around the whole call instead of around the function, so torch
    # never sees the exception it swallows.
    with forward_ctx:
        return _torch.checkpoint(
            function, *args, use_reentrant=False, context_fn=lambda: (contextlib.nullcontext(), recompute_ctx), **kwargs
        )
    return None  # reached only when forward_ctx swallowed the function's exception
