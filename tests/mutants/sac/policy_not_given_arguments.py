"""Selective checkpointing that calls the policy function with the context and the op only: the op's args and
kwargs, which the docs say the policy receives, never reach it."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["sac.policy-arguments"]
BREAKS = "the policy function is called without the op's args and kwargs"


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    if callable(policy_fn_or_list):
        policy = policy_fn_or_list

        def policy_fn_or_list(ctx, op, *args, **kwargs):
            return policy(ctx, op)

    return _torch.create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation)
