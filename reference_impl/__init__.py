"""A readable reference implementation of activation checkpointing: a drop-in ``torch.utils.checkpoint``.

Written from the documented contract (the spec sources and docstrings), not from torch's code.

Activation checkpointing trades compute for memory: tensors computed inside the checkpointed
function are not kept for the backward pass but recomputed, by running the function again, when
the backward needs them. Two variants, chosen by ``use_reentrant``:

- reentrant (``reentrant.py``): a custom autograd Function; the forward runs under no_grad and the
  backward recomputes, then runs a nested backward through the recomputed graph;
- non-reentrant (``non_reentrant.py``): saved-tensor hooks swap each saved tensor for a slot that
  the recompute refills on first use; supports autograd.grad, keyword arguments, nested inputs,
  early stop, a determinism check, debug logs and ``context_fn``.

Both replay the forward's RNG, autocast and default-device state in the recompute (``rng.py``), and
their recompute leaves state outside the region (module buffers) as the forward left it
(``outside_state.py``). ``checkpoint_sequential`` is in ``sequential.py``; argument handling is in
``api.py``; selective checkpointing (a ``context_fn``) in ``selective.py``; ``GraphExecGroup`` in
``groups.py``.
"""

from reference_impl.api import checkpoint, checkpoint_sequential
from reference_impl.groups import GraphExecGroup
from reference_impl.non_reentrant import CheckpointError, noop_context_fn
from reference_impl.selective import CheckpointPolicy, SelectiveCheckpointContext, create_selective_checkpoint_contexts
from reference_impl.switches import set_checkpoint_debug_enabled, set_checkpoint_early_stop

__version__ = "0.1.0"

__all__ = [
    "CheckpointError",
    "CheckpointPolicy",
    "GraphExecGroup",
    "SelectiveCheckpointContext",
    "checkpoint",
    "checkpoint_sequential",
    "create_selective_checkpoint_contexts",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
]

# What the harness reads of this module (docs/IMPLEMENTING.md): every feature (see conformance/data/capabilities.py).
__conformance__ = {"capabilities": {
    "features": [
        "checkpoint_sequential",
        "preserve_rng_state",
        "kwargs",
        "context_fn",
        "determinism_check",
        "debug",
        "early_stop",
        "selective_checkpointing",
        "use_reentrant_warning",
        "graph_exec_group",
        "distributed",
    ],
}}
