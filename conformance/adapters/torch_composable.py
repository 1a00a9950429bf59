"""torch's composable API: ``torch.distributed._composable.checkpoint(module, **kwargs)``.

It registers forward hooks on a module that run torch's non-reentrant checkpoint generator around the
module's forward (it raises NotImplementedError for ``use_reentrant=True``). The function is wrapped in a
fresh ``nn.Module`` per call (the API may be applied to a module only once, and must not hook the
caller's module); the checkpoint keywords go to ``checkpoint(module, ...)``, the rest to the forward.
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
NAME = "torch.distributed._composable.checkpoint"

CAPABILITIES = {
    "variants": ["non_reentrant"],
    "features": TORCH_WRAPPER_FEATURES,
    "devices": ["cpu", "cuda"],
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    composable = require("torch.distributed._composable", "torch (with torch.distributed)")
    options = {name: kwargs.pop(name) for name in TORCH_CHECKPOINT_KEYWORDS if name in kwargs}
    # use_reentrant goes to the API itself, which raises NotImplementedError for True.
    module = composable.checkpoint(
        FunctionModule(function), use_reentrant=bool(use_reentrant), preserve_rng_state=preserve_rng_state, **options
    )
    # Where the forward fails inside torch's hooks, torch can leave its checkpoint generator suspended,
    # with its saved-tensor hooks still installed for every later computation in the process (seen
    # with a backward inside the region: the nested recompute clears the generator, the outer forward
    # hook raises AssertionError). Close it, so one failure is reported once and does not poison the
    # tests after it; closing a finished generator does nothing.
    generators = []
    module.register_forward_pre_hook(lambda m, a: generators.append(composable.checkpoint.state(m)._ac_generator))
    try:
        return module(*args, **kwargs)
    finally:
        for generator in generators:
            if generator is not None:
                generator.close()


checkpoint_sequential = sequential_over(checkpoint)
