"""FairScale 0.4.13: ``fairscale.nn.checkpoint.checkpoint_wrapper(module, offload_to_cpu=False)``.

The wrapper patches the module's forward to run FairScale's own ``CheckpointFunction`` (an
``autograd.Function``: the reentrant design, forward under ``no_grad``, recompute inside backward). It
packs keyword arguments and non-tensor outputs itself, always stashes the CPU RNG state (and the CUDA
one where CUDA is available), and has no non-reentrant mode, no checkpoint_sequential (the adapter builds one from the wrapper,
unclaimed) and none of torch's newer keywords. The function is wrapped in a fresh ``nn.Module`` per call; keyword arguments
go to its forward, as with the real wrapper.
"""

from __future__ import annotations

from conformance.adapters._support import (
    FunctionModule,
    check_variant,
    distribution_version,
    reject_keywords,
    require,
    require_rng_preserved,
    sequential_over,
)

__version__ = distribution_version("fairscale")
NAME = "fairscale.nn.checkpoint.checkpoint_wrapper"

CAPABILITIES = {
    "variants": ["reentrant"],
    # No preserve_rng_state keyword, no sequential API, none of torch's newer keywords; it runs under
    # DDP and FSDP (the distributed area passes).
    "features": ["distributed"],
    "devices": ["cpu", "cuda"],
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    check_variant(NAME, use_reentrant, "reentrant", "FairScale has only its reentrant CheckpointFunction")
    require_rng_preserved(NAME, preserve_rng_state, "it always stashes and restores the CPU (and CUDA) RNG state")
    reject_keywords(NAME, kwargs)
    checkpointing = require("fairscale.nn.checkpoint", "fairscale==0.4.13")
    wrapped = checkpointing.checkpoint_wrapper(FunctionModule(function))
    return wrapped(*args, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
