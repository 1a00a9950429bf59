"""DeepSpeed 0.19.8 checkpointing configured with ``partition_activations=True`` (single-rank gloo init).

The option partitions the checkpointed inputs across model-parallel ranks to save memory; on one rank
it still replaces the stored inputs by partitions (see _deepspeed_configured for the init). Same API,
variants and unclaimed features as the plain ``deepspeed`` adapter.
"""

from __future__ import annotations

from conformance.adapters._deepspeed_configured import configured_checkpoint
from conformance.adapters._support import sequential_over
from conformance.adapters.deepspeed import CAPABILITIES, __version__  # noqa: F401

NAME = "deepspeed.checkpointing (partition_activations=True)"
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}

checkpoint = configured_checkpoint(partition_activations=True)
checkpoint_sequential = sequential_over(checkpoint)
