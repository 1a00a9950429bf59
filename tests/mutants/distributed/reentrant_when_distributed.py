"""Asked for the non-reentrant variant while a process group is initialized, it runs the reentrant one
(as libraries that choose their checkpoint from the distributed setup may). On one process it is torch's
non-reentrant checkpoint; under DDP it inherits the reentrant variant's documented limits: a layer
checkpointed twice, or unused parameters, make DDP mark a parameter ready twice."""

import torch.distributed as dist

from conformance.adapters._support import sequential_over
from tests.mutants._support.base import *  # noqa: F401,F403  (the rest of torch's surface, unchanged)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["distributed.ddp-non-reentrant"]
BREAKS = "non-reentrant requested, but the reentrant variant runs whenever a process group is initialized"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False and dist.is_available() and dist.is_initialized():
        use_reentrant = True
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
