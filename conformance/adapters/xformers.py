"""xformers 0.0.35: ``xformers.checkpoint.checkpoint(function, *args, preserve_rng_state=True, policy_fn=None, **kwargs)``.

A wrapper around torch's non-reentrant checkpoint with its own selective-checkpointing context
(``context_fn=partial(selective_checkpoint_context_fn, policy_fn)``); ``policy_fn=None`` is its default
policy. Every other keyword (torch's ``determinism_check``, ``debug``, ``early_stop`` and the function's
own) passes through to torch, so torch's global switches apply. There is no reentrant variant and no
``context_fn`` (it sets its own). No sequential API (the adapter builds one, unclaimed).
"""

from __future__ import annotations

from conformance.adapters._support import (
    check_variant,
    distribution_version,
    reject_keywords,
    require,
    sequential_over,
)
from conformance.adapters._torch_surface import surface

# torch's global switches apply under xformers' wrapper (no selective-checkpointing names: it sets its own context)
globals().update(surface("CheckpointError", "GraphExecGroup", "set_checkpoint_debug_enabled", "set_checkpoint_early_stop"))

__version__ = distribution_version("xformers")
NAME = "xformers.checkpoint"

CAPABILITIES = {
    "variants": ["non_reentrant"],
    "features": ["preserve_rng_state", "kwargs", "determinism_check", "debug", "early_stop", "graph_exec_group"],
    "devices": ["cpu", "cuda"],
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    xformers_checkpoint = require("xformers.checkpoint", "xformers==0.0.35").checkpoint
    check_variant(NAME, use_reentrant, "non_reentrant", "it always calls torch's use_reentrant=False")
    reject_keywords(NAME, kwargs, names=("context_fn",))
    return xformers_checkpoint(function, *args, preserve_rng_state=preserve_rng_state, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
