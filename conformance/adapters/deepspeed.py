"""DeepSpeed 0.19.8: ``deepspeed.checkpointing.checkpoint`` and ``non_reentrant_checkpoint``.

``checkpoint(function, *args, **kwargs)`` is DeepSpeed's reentrant ``CheckpointFunction`` (kwargs are
packed into positional arguments); ``non_reentrant_checkpoint(function, *args)`` is its saved-tensor-hooks
design (no kwargs). Both always stash the CPU RNG state, the accelerator's RNG state and DeepSpeed's
model-parallel RNG tracker; neither has preserve_rng_state, torch's newer keywords or a sequential API (the adapter builds
checkpoint_sequential from them, unclaimed).
Used with the default configuration (``deepspeed.checkpointing.configure`` is never called: no
partitioning, no CPU offload) and without a distributed init. Install with ``DS_BUILD_OPS=0``.
"""

from __future__ import annotations

from conformance.adapters._support import (
    distribution_version,
    reject_keywords,
    require,
    require_rng_preserved,
    sequential_over,
)

__version__ = distribution_version("deepspeed")
NAME = "deepspeed.checkpointing"

CAPABILITIES = {
    "variants": ["reentrant", "non_reentrant"],
    # kwargs is a non-reentrant feature, and non_reentrant_checkpoint takes none. Both run under DDP
    # and FSDP (the distributed area passes).
    "features": ["distributed"],
    "devices": ["cpu", "cuda"],
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


def _checkpointing():
    # deepspeed.checkpointing is an attribute of the deepspeed package, not an importable module path.
    return require("deepspeed.runtime.activation_checkpointing.checkpointing", "deepspeed==0.19.8 (DS_BUILD_OPS=0)")


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    require_rng_preserved(NAME, preserve_rng_state, "it always stashes the CPU, accelerator and tracker RNG states")
    reject_keywords(NAME, kwargs)
    checkpointing = _checkpointing()
    if use_reentrant is False:
        return checkpointing.non_reentrant_checkpoint(function, *args, **kwargs)
    return checkpointing.checkpoint(function, *args, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
