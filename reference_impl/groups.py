"""GraphExecGroup: several backward calls that share one recompute of each checkpointed region.

Implements the docstring of torch 2.13: "Any checkpointed regions encountered by backward under the
same instance of this context manager will trigger recompute at most once, even if there are
multiple calls to backward." and "Backward calls under the same instance of this context manager
must execute over non-overlapping regions of the backward graph even if retain_graph=True. In
particular, any two backward call cannot use the same saved activation for gradient computation."
and "This context manager only affects checkpoint with use_reentrant=False, and is a no-op otherwise."

How. The non-reentrant checkpoint keys its recomputes by backward pass (autograd's graph task).
Under a group it keys them by the group instead, so every backward under one instance reads the
tensors of the one recompute; each is handed out once, so a second backward that needs the same
saved activation finds it taken and raises ``CheckpointError``. As torch does, a group entered while
one is active (even the same instance) is refused: no backward is under two groups at once. The
active group is process-wide, not per thread: on an accelerator the backward runs on autograd's
device threads.
"""

from __future__ import annotations

_active = None  # the GraphExecGroup whose block is running


class GraphExecGroup:
    """Context manager: checkpointed regions recompute at most once for all backwards inside it."""

    def __enter__(self):
        global _active
        if _active is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group {_active}")
        _active = self
        return self

    def __exit__(self, *exc):
        global _active
        _active = None
        return False


def active_group():
    """The group the current backward runs under, or None."""
    return _active
