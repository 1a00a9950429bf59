"""torch's module wrapper: ``torch.distributed.algorithms._checkpoint.checkpoint_wrapper``.

``checkpoint_wrapper(module, checkpoint_impl, **checkpoint_fn_kwargs)`` wraps a module so that each call
runs through ``torch.utils.checkpoint.checkpoint``. ``CheckpointImpl.REENTRANT`` / ``NO_REENTRANT`` map to
the two variants; the checkpoint keywords (preserve_rng_state, context_fn, determinism_check, debug,
early_stop) go to the wrapper as ``checkpoint_fn_kwargs``, everything else to the wrapped forward. The
function is wrapped in a fresh ``nn.Module`` per call. With REENTRANT the wrapper packs keyword arguments
itself, so it accepts kwargs where ``checkpoint(use_reentrant=True)`` rejects them.
"""

from __future__ import annotations

from conformance.adapters._support import (
    FunctionModule,
    TORCH_CHECKPOINT_KEYWORDS,
    TORCH_WRAPPER_FEATURES,
    distribution_version,
    require,
    sequential_over,
)
from conformance.adapters._torch_surface import *  # noqa: F403  (torch's global switches and helpers apply here too)

__version__ = distribution_version("torch")
NAME = "torch checkpoint_wrapper"

CAPABILITIES = {
    "variants": ["reentrant", "non_reentrant"],
    "features": TORCH_WRAPPER_FEATURES,
    "devices": ["cpu", "cuda"],
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    wrappers = require("torch.distributed.algorithms._checkpoint.checkpoint_wrapper", "torch (with torch.distributed)")
    impl = wrappers.CheckpointImpl.REENTRANT if use_reentrant else wrappers.CheckpointImpl.NO_REENTRANT
    options = {name: kwargs.pop(name) for name in TORCH_CHECKPOINT_KEYWORDS if name in kwargs}
    wrapped = wrappers.checkpoint_wrapper(
        FunctionModule(function), checkpoint_impl=impl, preserve_rng_state=preserve_rng_state, **options
    )
    return wrapped(*args, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
