"""Non-reentrant: debug=True together with a non-default context_fn silently drops the debug trace."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["debug.rejects-context-fn"]
BREAKS = "debug=True with a non-default context_fn is accepted (the debug flag is dropped)"


def checkpoint(function, *args, debug=False, context_fn=_torch.noop_context_fn, **kwargs):
    if context_fn is not _torch.noop_context_fn:
        debug = False
    return _torch.checkpoint(function, *args, debug=debug, context_fn=context_fn, **kwargs)
