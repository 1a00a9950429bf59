"""Selective checkpointing that ignores allow_cache_entry_mutation=True: a changed cache entry always raises."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["sac.cache-mutation-allowed"]
BREAKS = "allow_cache_entry_mutation=True does not disable the check: a changed cached tensor still raises"


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    return _torch.create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False)
