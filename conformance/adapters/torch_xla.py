"""torch-xla 2.9.0: ``torch_xla.utils.checkpoint.checkpoint(function, *args, use_reentrant=True, **kwargs)``.

torch_xla's own fork of torch's reentrant ``CheckpointFunction``: the forward runs under ``no_grad`` and
stashes the XLA RNG state (``xm.get_rng_state()``) beside the CPU one (and the CUDA ones, where CUDA was
initialised); backward puts an ``optimization_barrier_`` over the saved inputs (and, for a bound method of
a module, its parameters and buffers), restores the states under ``torch.random.fork_rng`` and
``xm.fork_rng``, re-enters the forward's CUDA, CPU and XLA autocast and recomputes. ``preserve_rng_state``
is its one keyword; any other raises ``ValueError`` (both variants), and ``use_reentrant=False`` raises
``ValueError: XLA currently does not support use_reentrant==False``: its own refusals, passed through.
Everything, ``use_reentrant`` included, is passed as it is: torch's
``use_reentrant=None`` ("the default") is falsy there and also refused. No sequential API (the adapter
builds one, unclaimed).

torch-xla 2.9.0 loads only with torch 2.9.0, so this row runs in its own environment (``tox -e torch-xla``,
label ``torch-releases``) with ``PJRT_DEVICE=CPU``: the tests' tensors are torch CPU tensors, and the XLA
RNG calls go to the CPU PJRT client.
"""

from __future__ import annotations

import contextlib

from conformance.adapters._support import distribution_version, require, sequential_over

__version__ = distribution_version("torch-xla")
NAME = "torch_xla.utils.checkpoint.checkpoint"

CAPABILITIES = {
    "variants": ["reentrant"],
    "features": ["preserve_rng_state"],
    # The harness's devices: torch CPU tensors (the XLA RNG on the CPU PJRT client); CUDA is not tried.
    "devices": ["cpu"],
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


def _xla_checkpoint():
    return require("torch_xla.utils.checkpoint", "torch-xla==2.9.0 with torch==2.9.0").checkpoint


# Importing torch_xla takes tens of seconds on a busy machine: where it is installed it is imported with the
# adapter, so that the harness's run process pays it once, before any test's clock starts (its attempts are
# forks of that process). The PJRT client itself starts on the first call (xm.get_rng_state()), in a test.
with contextlib.suppress(ImportError):
    _xla_checkpoint()


def checkpoint(function, *args, **kwargs):
    xla_checkpoint = _xla_checkpoint()
    return xla_checkpoint(function, *args, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
