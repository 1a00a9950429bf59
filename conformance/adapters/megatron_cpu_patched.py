"""PATCHED Megatron-core: ``megatron.core.tensor_parallel.checkpoint`` with its CUDA RNG calls stubbed.

NOT Megatron as shipped. On a CPU-only torch, real Megatron fails at ``torch.cuda.random.get_rng_state``
before running anything (see the ``megatron`` row). This adapter replaces the two CUDA RNG helpers in
``megatron.core.tensor_parallel.random`` (``_get_cuda_rng_state`` returns an empty tensor,
``_set_cuda_rng_state`` does nothing) when CUDA is unavailable, so that the rest of Megatron's
checkpoint (CPU RNG stash, tracker states, recompute, gradient plumbing) can be tested on CPU. On a
machine with CUDA nothing is patched and this row equals the ``megatron`` row. The patch is global to
the process and is applied on the first call, so use this adapter only in its own run.
"""

from __future__ import annotations

import torch
from conformance.adapters import megatron
from conformance.adapters._support import distribution_version, sequential_over

__version__ = distribution_version("megatron-core") + " (CUDA RNG stubbed on CPU)"
NAME = megatron.NAME + " (CUDA RNG stubbed)"

CAPABILITIES = {**megatron.CAPABILITIES, "devices": ["cpu", "cuda"]}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


def _stub_cuda_rng() -> None:
    random = megatron.tensor_parallel().random
    if torch.cuda.is_available() or getattr(random, "_conformance_cuda_rng_stubbed", False):
        return
    random._get_cuda_rng_state = lambda *args, **kwargs: torch.empty(0, dtype=torch.uint8)
    random._set_cuda_rng_state = lambda *args, **kwargs: None
    random._conformance_cuda_rng_stubbed = True


def checkpoint(function, *args, **kwargs):
    _stub_cuda_rng()
    return megatron.checkpoint(function, *args, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
