"""RETURNN 1.20261022: ``returnn.torch.util.gradient_checkpoint.gradient_checkpoint_scope``.

A scope, not a function wrapper: every tensor created inside ``with gradient_checkpoint_scope():`` is not saved
for backward; the ops that made it are recorded by a ``TorchDispatchMode`` and replayed when backward first unpacks
one (saved-tensor hooks that outlive the scope as long as a recorded tensor is alive; RETURNN hooks
``saved_tensors_hooks.__enter__/__exit__`` and ``Tensor.__del__`` to keep its hooks in order). It stores the RNG
and autocast state of each device the recorded ops touch and restores them around the replay. The design is
non-reentrant (no Function boundary, no recompute of the whole function); RETURNN's own docstring compares it
with ``torch.utils.checkpoint.checkpoint(...)``.

The adapter runs the contract's call as ``with gradient_checkpoint_scope(): return function(*args, **kwargs)``:
keyword arguments reach the function (the kwargs feature). It has no reentrant variant, no ``preserve_rng_state``
option (it always stores and restores the RNG state), none of torch's checkpoint keywords, and no sequential API
(the adapter builds one, unclaimed).
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

__version__ = distribution_version("returnn")
NAME = "returnn.torch.util.gradient_checkpoint.gradient_checkpoint_scope"

CAPABILITIES = {
    "variants": ["non_reentrant"],
    "features": ["kwargs"],
    "devices": ["cpu", "cuda"],
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    scope = require("returnn.torch.util.gradient_checkpoint", "returnn==1.20261022.211313").gradient_checkpoint_scope
    require_rng_preserved(NAME, preserve_rng_state, "it always stores and restores the RNG state of the devices its ops use")
    reject_keywords(NAME, kwargs)
    check_variant(NAME, use_reentrant, "non_reentrant", "a scope of saved-tensor hooks has no reentrant form")
    with scope():
        return function(*args, **kwargs)


checkpoint_sequential = sequential_over(checkpoint)
