"""Selective checkpointing that takes any list and any argument without a look: an op packet in the
list matches no dispatched op (it names no overload), so nothing is saved, silently; an argument that is
neither a list nor callable fails only once an op runs."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["sac.bad-argument-rejected"]
BREAKS = "an op list holding an OpOverloadPacket, or an argument neither list nor callable, is accepted"


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    listed = policy_fn_or_list

    def policy(ctx, op, *args, **kwargs):
        if isinstance(listed, list):
            return _torch.CheckpointPolicy.MUST_SAVE if op in listed else _torch.CheckpointPolicy.PREFER_RECOMPUTE
        return listed(ctx, op, *args, **kwargs)

    return _torch.create_selective_checkpoint_contexts(policy, allow_cache_entry_mutation)
