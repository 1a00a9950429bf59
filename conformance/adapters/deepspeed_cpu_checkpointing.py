"""DeepSpeed 0.19.8 checkpointing configured with ``checkpoint_in_cpu=True`` (single-rank gloo init).

The option keeps the checkpointed inputs in CPU memory between forward and recompute (see
_deepspeed_configured for the init). Same API, variants and unclaimed features as the plain ``deepspeed``
adapter.
"""

from __future__ import annotations

from conformance.adapters._deepspeed_configured import configured_checkpoint
from conformance.adapters._support import sequential_over
from conformance.adapters.deepspeed import CAPABILITIES, __version__  # noqa: F401

NAME = "deepspeed.checkpointing (checkpoint_in_cpu=True)"
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}

checkpoint = configured_checkpoint(checkpoint_in_cpu=True)
checkpoint_sequential = sequential_over(checkpoint)
