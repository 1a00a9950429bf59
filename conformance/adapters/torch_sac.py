"""torch's selective activation checkpointing (SAC), with a fixed policy: save matmuls, recompute the rest.

``torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False, context_fn=...)`` where ``context_fn``
builds ``create_selective_checkpoint_contexts`` over the matmul-family ops: their outputs are cached in
the forward and reused in the recompute, every other op (pointwise, dropout, reductions) is recomputed.
This is the usual production policy (cheap ops recomputed, expensive ones kept). SAC exists only for the
non-reentrant variant. A caller's own ``context_fn`` is entered around the SAC contexts, so the policy
still applies and the caller's contexts see the ops that really run (not the ones SAC serves from its
cache in the recompute).
"""

from __future__ import annotations

import contextlib
import functools

import torch
from conformance.adapters._support import TORCH_WRAPPER_FEATURES, distribution_version, sequential_over
from conformance.adapters._torch_surface import *  # noqa: F403  (torch's global switches and helpers apply here too)
from torch.utils.checkpoint import create_selective_checkpoint_contexts, noop_context_fn

__version__ = distribution_version("torch")
NAME = "torch selective activation checkpointing"

CAPABILITIES = {
    "variants": ["non_reentrant"],
    "features": TORCH_WRAPPER_FEATURES,
    "devices": ["cpu", "cuda"],
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}

_aten = torch.ops.aten
SAVED_OPS = [_aten.mm.default, _aten.addmm.default, _aten.bmm.default, _aten.baddbmm.default]


class _Stacked:
    """Enters ``outer`` then ``inner``. Re-enterable, like torch's own contexts: torch enters the recompute
    context once per recompute, and a region can be recomputed more than once (retain_graph, a
    backward inside the region). Eager checkpointing accepts any context manager here."""

    def __init__(self, outer, inner):
        self.outer, self.inner = outer, inner
        self.entered = []

    def __enter__(self):
        stack = contextlib.ExitStack()
        stack.enter_context(self.outer)
        stack.enter_context(self.inner)
        self.entered.append(stack)

    def __exit__(self, *exc_info):
        return self.entered.pop().__exit__(*exc_info)


def sac_context_fn(user_context_fn=noop_context_fn):
    forward, recompute = create_selective_checkpoint_contexts(SAVED_OPS)
    user_forward, user_recompute = user_context_fn()
    return _Stacked(user_forward, forward), _Stacked(user_recompute, recompute)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, **kwargs):
    # use_reentrant is passed on: torch itself rejects context_fn with use_reentrant=True (ValueError).
    return torch.utils.checkpoint.checkpoint(
        function,
        *args,
        use_reentrant=False if use_reentrant is None else use_reentrant,
        context_fn=functools.partial(sac_context_fn, context_fn),
        **kwargs,
    )


checkpoint_sequential = sequential_over(checkpoint)
