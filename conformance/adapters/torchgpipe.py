"""torchgpipe 0.0.7: ``torchgpipe.checkpoint.checkpoint(function, input)``.

GPipe's own checkpointing, which splits torch's reentrant ``CheckpointFunction`` in two autograd Functions
so that the recompute can run before the gradient arrives: ``Checkpoint`` runs the function under
``no_grad`` in the forward and, in backward, backpropagates through what ``Recompute`` left in a shared
one-slot deque; ``Recompute`` (its backward re-runs the function under ``enable_grad`` with the CPU RNG
state, and the CUDA one of the first input's device, that ``Checkpoint`` stashed) is joined to the first
output by a phony (empty) tensor, so that autograd runs it first. ``checkpoint`` is the helper GPipe's
pipeline builds from the same ``Checkpointing`` pair ("to test or debug", its docstring says): the only
entry point outside a GPipe pipeline.

The function takes one input, a tensor or a tuple of tensors: the adapter passes a single tensor argument
as it is and any other arguments as their tuple, which the function gets unpacked (a lone list argument is
not handed over as torchgpipe's input sequence, which would give the function a tuple in its place). Keyword arguments reach
torchgpipe's ``checkpoint`` as they are (it has none, so it rejects them). There is no non-reentrant
variant, no ``preserve_rng_state`` (the RNG state is always stashed), none of torch's newer keywords and
no sequential API (the adapter builds one, unclaimed).
"""

from __future__ import annotations

import torch

from conformance.adapters._support import (
    check_variant,
    distribution_version,
    reject_keywords,
    require,
    require_rng_preserved,
    sequential_over,
)

__version__ = distribution_version("torchgpipe")
NAME = "torchgpipe.checkpoint.checkpoint"

CAPABILITIES = {
    "variants": ["reentrant"],
    # No keywords but its input, no sequential API; the CUDA RNG state of the first input's device is stashed.
    "features": [],
    "devices": ["cpu", "cuda"],
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    check_variant(NAME, use_reentrant, "reentrant", "its Checkpoint/Recompute pair is an autograd Function, the reentrant design")
    require_rng_preserved(NAME, preserve_rng_state, "it always stashes the CPU RNG state (and the CUDA one of the first input's device)")
    reject_keywords(NAME, kwargs)
    torchgpipe_checkpoint = require("torchgpipe.checkpoint", "torchgpipe==0.0.7").checkpoint
    if len(args) == 1 and isinstance(args[0], torch.Tensor):
        return torchgpipe_checkpoint(function, args[0], **kwargs)
    return torchgpipe_checkpoint(lambda inputs: function(*inputs), args, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
