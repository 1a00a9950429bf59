"""With a process group initialized, the recompute replays rank 0's RNG state on every rank (broadcast
at the forward, "so that the ranks recompute alike"), not the rank's own. On one process there is no
group and torch's checkpoint runs unchanged; under DDP, every rank but rank 0 recomputes its dropout
with rank 0's masks, so its gradients are not those of its forward."""

import torch
import torch.distributed as dist

from conformance.adapters._support import sequential_over
from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.rng_around import replaying
from tests.mutants._support.base import *  # noqa: F401,F403  (the rest of torch's surface, unchanged)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["distributed.rng-across-ranks"]
BREAKS = "under a process group, every rank's recompute replays rank 0's RNG state instead of its own"


def checkpoint(function, *args, preserve_rng_state=True, **kwargs):
    if not (preserve_rng_state and dist.is_available() and dist.is_initialized()):
        return _checkpoint(function, *args, preserve_rng_state=preserve_rng_state, **kwargs)
    shared = torch.get_rng_state()
    dist.broadcast(shared, src=0)

    def around(call, function, *args, **kwargs):
        if call == 0:
            return function(*args, **kwargs)
        with replaying(shared):
            return function(*args, **kwargs)

    return _checkpoint(on_calls(function, around), *args, preserve_rng_state=False, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
