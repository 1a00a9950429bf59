"""Non-reentrant: runs the forward under context_fn's second manager and the recompute under its first."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["contextfn.forward-and-recompute"]
BREAKS = "the context managers returned by context_fn are used in the wrong order"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_checkpointing_without_reentrant_with_context_fn"]


def checkpoint(function, *args, context_fn=_torch.noop_context_fn, **kwargs):
    def swapped():
        forward, recompute = context_fn()
        return recompute, forward

    if context_fn is not _torch.noop_context_fn:
        kwargs["context_fn"] = swapped
    return _torch.checkpoint(function, *args, **kwargs)
