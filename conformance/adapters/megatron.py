"""Megatron-core 0.16.1: ``megatron.core.tensor_parallel.checkpoint(function, distribute_saved_activations, *args)``.

Megatron's reentrant ``CheckpointFunction``, called with ``distribute_saved_activations=False`` (True
splits the saved input across a tensor-parallel group). It always stashes the CPU RNG state, the CUDA
RNG state and the tracker's CUDA RNG states, and has no non-reentrant mode, no kwargs, no
preserve_rng_state and no sequential API (the adapter builds one, unclaimed). It is a CUDA library: on
a CPU-only torch every call fails at its CUDA RNG access (``torch.cuda.random.get_rng_state``), which
this row reports as it is.
``megatron_cpu_patched`` is the same API with the CUDA RNG calls stubbed, to test the rest on CPU.
"""

from __future__ import annotations

from conformance.adapters._support import (
    check_variant,
    distribution_version,
    reject_keywords,
    require,
    require_rng_preserved,
    sequential_over,
)

__version__ = distribution_version("megatron-core")
NAME = "megatron.core.tensor_parallel.checkpoint"

CAPABILITIES = {
    "variants": ["reentrant"],
    "features": ["distributed"],  # made for process groups; megatron_cpu_patched passes the distributed area
    "devices": ["cuda"],  # on a CPU-only torch it cannot run at all (see above)
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


def tensor_parallel():
    return require("megatron.core.tensor_parallel", "megatron-core==0.16.1")


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    check_variant(NAME, use_reentrant, "reentrant", "Megatron has only its reentrant CheckpointFunction")
    require_rng_preserved(NAME, preserve_rng_state, "it always stashes the CPU, CUDA and tracker RNG states")
    reject_keywords(NAME, kwargs)
    # Other kwargs go through, and Megatron's signature rejects them (TypeError).
    return tensor_parallel().checkpoint(function, False, *args, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
