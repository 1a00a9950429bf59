"""Selective checkpointing that hands cached outputs of the same op back in reverse order."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["sac.same-gradients"]
BREAKS = "the recompute gets the saved outputs of repeated ops (two mm) in the wrong order: wrong gradients"


class _ReversedReplay:
    """Wraps torch's recompute mode: on entry, reverses each op's cached outputs."""

    def __init__(self, recompute_mode):
        self.mode = recompute_mode

    def __enter__(self):
        for per_index in self.mode.storage.values():
            indices = sorted(per_index)
            values = [per_index[i] for i in indices]
            per_index.update(zip(indices, reversed(values)))
        return self.mode.__enter__()

    def __exit__(self, *exc):
        return self.mode.__exit__(*exc)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    forward, recompute = _torch.create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation)
    return forward, _ReversedReplay(recompute)
