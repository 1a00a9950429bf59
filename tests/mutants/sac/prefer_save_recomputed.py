"""Selective checkpointing that treats PREFER_SAVE as a hint eager mode may ignore: the op is recomputed.

The docs let only "other subsystems like torch.compile" override PREFER_* policies; in eager mode
nothing does, so a PREFER_SAVE output must be saved like a MUST_SAVE one.
"""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["sac.save-not-recomputed"]
BREAKS = "an op whose policy is PREFER_SAVE is recomputed in backward (MUST_SAVE still saves)"


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    if callable(policy_fn_or_list):
        policy = policy_fn_or_list

        def policy_fn_or_list(ctx, op, *args, **kwargs):
            answer = policy(ctx, op, *args, **kwargs)
            return _torch.CheckpointPolicy.PREFER_RECOMPUTE if answer == _torch.CheckpointPolicy.PREFER_SAVE else answer

    return _torch.create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation)
