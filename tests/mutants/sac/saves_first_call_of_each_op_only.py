"""Selective checkpointing that caches only the first call of each op the policy saves: the later calls of the
same op (a second sin, a third) are recomputed as if the policy had said PREFER_RECOMPUTE."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["sac.save-not-recomputed"]
BREAKS = "an op called several times in the region has only its first call saved; the others are recomputed"


class _FirstCallsOnly:
    """Wraps torch's forward mode: on exit, every cached call after an op's first is marked for recompute."""

    def __init__(self, forward_mode):
        self.mode = forward_mode

    def __enter__(self):
        return self.mode.__enter__()

    def __exit__(self, *exc):
        for per_index in self.mode.storage.values():
            per_index.update({index: _torch._RECOMPUTE for index in per_index if index > 0})
        return self.mode.__exit__(*exc)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    forward, recompute = _torch.create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation)
    return _FirstCallsOnly(forward), recompute
