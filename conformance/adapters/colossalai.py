"""ColossalAI 0.5.0: ``colossalai.legacy.utils.activation_checkpoint.checkpoint(function, activation_offload, *args, use_reentrant=True)``.

ColossalAI's own checkpoint: ``use_reentrant=True`` is its ``CheckpointFunction`` (an ``autograd.Function`` in the
reentrant design), ``False`` its ``_checkpoint_without_reentrant`` (saved-tensor hooks that recompute the whole
function at the first unpack). Both always stash the CPU RNG state and the states of its own seed manager
(``colossalai.legacy.context.random``: one CUDA RNG state per parallel mode, synchronised from
``torch.cuda.get_rng_state()`` at every call), and re-enter autocast when the forward ran under it. The adapter
passes ``activation_offload=False`` (True moves the inputs to the accelerator and the saved ones to the CPU);
there are no kwargs, no ``preserve_rng_state`` and no sequential API (the adapter builds one, unclaimed).

Its seed manager needs a current parallel mode: ``colossalai.legacy`` launch (``ParallelContext.set_seed``) adds a
seed for ``ParallelMode.DATA`` and makes it current, where CUDA is available. The adapter does that seed-manager
part once per process (seed 1024, launch's default) where CUDA is available, and leaves torch's own seeds alone.
On a CPU-only torch every call fails at ``torch.cuda.get_rng_state()``, which this row reports as it is;
``colossalai_cpu_patched`` is the same API with those CUDA RNG calls stubbed.
ColossalAI 0.5.0 declares torch<=2.5.1: it is installed without its dependencies (requirements/colossalai.txt).
"""

from __future__ import annotations

import torch

from conformance.adapters._support import (
    distribution_version,
    reject_keywords,
    require,
    require_rng_preserved,
    sequential_over,
)

__version__ = distribution_version("colossalai")
NAME = "colossalai.legacy.utils.activation_checkpoint.checkpoint"
DISTRIBUTION = "colossalai==0.5.0 --no-deps (requirements/colossalai.txt)"
LAUNCH_SEED = 1024  # colossalai.legacy.launch's default seed

CAPABILITIES = {
    "variants": ["reentrant", "non_reentrant"],
    "features": [],
    "devices": ["cuda"],  # on a CPU-only torch it cannot run at all (see above)
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


def activation_checkpoint():
    return require("colossalai.legacy.utils.activation_checkpoint", DISTRIBUTION)


def seed_manager_as_launched(cuda_rng_usable: bool) -> None:
    """The seed-manager part of ``ParallelContext.set_seed``: a seed for ParallelMode.DATA, made current."""
    random = require("colossalai.legacy.context.random", DISTRIBUTION)
    parallel_mode = require("colossalai.legacy.context.parallel_mode", DISTRIBUTION).ParallelMode
    if cuda_rng_usable and parallel_mode.DATA not in random.get_seeds():
        random.add_seed(parallel_mode.DATA, LAUNCH_SEED)
        random.set_mode(parallel_mode.DATA)


def checkpoint_with(prepare, name, function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """The contract's call on ColossalAI's checkpoint, after ``prepare`` (its seed manager, or the CPU stub)."""
    require_rng_preserved(name, preserve_rng_state, "it always stashes the CPU RNG state and its seed manager's states")
    reject_keywords(name, kwargs)
    module = activation_checkpoint()
    prepare()
    # Other kwargs go through, and ColossalAI's signature rejects them (TypeError).
    return module.checkpoint(function, False, *args, use_reentrant=use_reentrant is not False, **kwargs)


def checkpoint(function, *args, **kwargs):
    return checkpoint_with(lambda: seed_manager_as_launched(torch.cuda.is_available()), NAME, function, *args, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
