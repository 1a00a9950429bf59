"""Selective checkpointing that saves every op, whatever the policy says."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["sac.recompute-recomputed"]
BREAKS = "ops whose policy is MUST_RECOMPUTE/PREFER_RECOMPUTE are saved instead of recomputed"


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    def save_all(ctx, op, *args, **kwargs):
        return _torch.CheckpointPolicy.MUST_SAVE

    return _torch.create_selective_checkpoint_contexts(save_all, allow_cache_entry_mutation)
