"""PATCHED ColossalAI: ``colossalai.legacy.utils.activation_checkpoint.checkpoint`` with its CUDA RNG calls stubbed.

NOT ColossalAI as shipped. On a CPU-only torch, real ColossalAI fails at ``torch.cuda.get_rng_state()`` (its seed
manager's ``sync_states``) before running anything (see the ``colossalai`` row). Where CUDA is unavailable this
adapter gives ColossalAI's two RNG modules (``colossalai.legacy.context.random._helper`` and ``.seed_manager``) a
``torch`` whose ``cuda.get_rng_state`` returns an empty tensor and whose ``cuda.set_rng_state`` and
``cuda.manual_seed`` do nothing; everything else is torch itself. Then the seed manager is set up as launch does
on CUDA (a current ParallelMode.DATA seed), so that the rest of ColossalAI's checkpoint (CPU RNG stash, seed-manager
bookkeeping, both variants' recompute and gradient plumbing) can be tested on CPU. On a machine with CUDA nothing is
patched and this row equals the ``colossalai`` row. The patch is global to the process and is applied on the first
call, so use this adapter only in its own run.
"""

from __future__ import annotations

import torch

from conformance.adapters import colossalai
from conformance.adapters._support import distribution_version, require, sequential_over

__version__ = distribution_version("colossalai") + " (CUDA RNG stubbed on CPU)"
NAME = colossalai.NAME + " (CUDA RNG stubbed)"

CAPABILITIES = {**colossalai.CAPABILITIES, "devices": ["cpu", "cuda"]}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


class _CudaRngStub:
    """``torch.cuda`` as ColossalAI's seed manager sees it on CPU: its RNG state calls do nothing."""

    @staticmethod
    def get_rng_state(*args, **kwargs):
        return torch.empty(0, dtype=torch.uint8)

    @staticmethod
    def set_rng_state(*args, **kwargs):
        return None

    @staticmethod
    def manual_seed(*args, **kwargs):
        return None

    def __getattr__(self, name):
        return getattr(torch.cuda, name)


class _TorchWithCudaRngStubbed:
    cuda = _CudaRngStub()

    def __getattr__(self, name):
        return getattr(torch, name)


def _stub_cuda_rng() -> None:
    if torch.cuda.is_available():
        return colossalai.seed_manager_as_launched(True)
    helper = require("colossalai.legacy.context.random._helper", colossalai.DISTRIBUTION)
    seed_manager = require("colossalai.legacy.context.random.seed_manager", colossalai.DISTRIBUTION)
    if not isinstance(helper.torch, _TorchWithCudaRngStubbed):
        helper.torch = seed_manager.torch = _TorchWithCudaRngStubbed()
    colossalai.seed_manager_as_launched(True)


def checkpoint(function, *args, **kwargs):
    return colossalai.checkpoint_with(_stub_cuda_rng, NAME, function, *args, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
