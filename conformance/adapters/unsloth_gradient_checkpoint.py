"""Unsloth's second checkpointer (unsloth-zoo 2026.10.9): ``torch.utils.checkpoint.checkpoint`` after ``patch_gradient_checkpointing``.

``patch_gradient_checkpointing()`` replaces torch's ``checkpoint`` by ``unsloth_gradient_checkpoint(function,
*args, use_reentrant=None, **kwargs)``, which runs ``Unsloth_Gradient_Checkpointer``: a reentrant Function that
saves the first argument, keeps the others on ``ctx``, and recomputes under ``enable_grad`` in backward. It ignores
``use_reentrant``, drops torch's checkpoint keywords (``preserve_rng_state``, ``context_fn``, ...) and binds the
others into the function. It stashes no RNG state and replays no autocast. torch's ``checkpoint_sequential``
runs the patched ``checkpoint``.

The adapter calls the patched ``torch.utils.checkpoint`` with the contract's call unchanged. It claims the
reentrant variant only (the Function's design; ``use_reentrant=False`` runs the same Function, whose tests then
read unsupported) and no keyword features: the keywords it accepts do nothing. Import on CPU: see ``_unsloth``.
"""

from __future__ import annotations

from conformance.adapters import _unsloth
from conformance.adapters._support import distribution_version

__version__ = distribution_version("unsloth-zoo")
NAME = "torch.utils.checkpoint patched by unsloth_zoo (patch_gradient_checkpointing)"

CAPABILITIES = {
    "variants": ["reentrant"],
    "features": ["checkpoint_sequential"],
    "devices": ["cpu", "cuda"],
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


checkpoint, checkpoint_sequential = _unsloth.entry_points("patch_gradient_checkpointing", "unsloth_gradient_checkpoint")
