"""Selective checkpointing that reads a policy's bool answer the other way round: True recomputes,
False saves (torch maps True to MUST_SAVE)."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["sac.bool-policy"]
BREAKS = "a policy answering True gets its op recomputed, False gets it saved"


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    if callable(policy_fn_or_list):
        policy = policy_fn_or_list

        def policy_fn_or_list(ctx, op, *args, **kwargs):
            answer = policy(ctx, op, *args, **kwargs)
            return (not answer) if isinstance(answer, bool) else answer

    return _torch.create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation)
