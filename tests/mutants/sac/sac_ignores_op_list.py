"""Selective checkpointing whose list form saves nothing (policy functions still work)."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["sac.op-list"]
BREAKS = "an op list is treated as PREFER_RECOMPUTE for every op, so the listed ops are recomputed"


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    if isinstance(policy_fn_or_list, list):
        def policy_fn_or_list(ctx, op, *args, **kwargs):
            return _torch.CheckpointPolicy.PREFER_RECOMPUTE

    return _torch.create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation)
