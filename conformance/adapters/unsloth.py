"""Unsloth (unsloth-zoo 2026.10.9): ``torch.utils.checkpoint.checkpoint`` after ``patch_unsloth_smart_gradient_checkpointing``.

What Unsloth's users run: its smart patch replaces torch's ``checkpoint`` by ``unsloth_checkpoint`` and torch's
``CheckpointFunction`` by ``UnslothCheckpointFunction``, its own reentrant Function (it offloads the first input
to host buffers when that input is over 2 MB and requires grad, stashes the CPU and device RNG states when
``preserve_rng_state``, replays autocast). ``unsloth_checkpoint`` forces ``use_reentrant=True`` whatever the caller
passes (so that transformers' ``use_reentrant=False`` default still reaches its Function), binds keyword arguments
into the function, and raises ``ValueError`` for ``context_fn`` and ``debug``. torch's own
``checkpoint_sequential`` looks ``checkpoint`` up in its module, so it runs the patched one too.

The adapter calls the patched ``torch.utils.checkpoint`` with the contract's call unchanged. Both variants are
claimed: the caller's ``use_reentrant=False`` is a call users make (transformers' default), and what they get
for it is what the non-reentrant tests check. Import and initialisation on CPU: see ``_unsloth``.
"""

from __future__ import annotations

from conformance.adapters import _unsloth
from conformance.adapters._support import distribution_version

__version__ = distribution_version("unsloth-zoo")
NAME = "torch.utils.checkpoint patched by unsloth_zoo (smart gradient checkpointing)"

CAPABILITIES = {
    "variants": ["reentrant", "non_reentrant"],
    # preserve_rng_state is honoured, keyword arguments are bound into the function, checkpoint_sequential is
    # torch's calling the patched checkpoint. context_fn and debug raise ValueError, determinism_check and
    # early_stop are accepted and ignored (it has no check and always recomputes whole).
    "features": ["checkpoint_sequential", "preserve_rng_state", "kwargs"],
    "devices": ["cpu", "cuda"],
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}


checkpoint, checkpoint_sequential = _unsloth.entry_points("patch_unsloth_smart_gradient_checkpointing", "unsloth_checkpoint")
