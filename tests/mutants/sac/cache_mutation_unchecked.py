"""Selective checkpointing that never checks its cache for in-place changes, as if every caller passed
allow_cache_entry_mutation=True: the recompute silently reads a changed tensor.

pytorch/pytorch#70135 (soulitzer on a cache of saved activations): "You may [get] silently incorrect
results if you use in-place operations" (pytorch/pytorch#96319).
"""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["sac.cache-mutation-detected"]
BREAKS = "a cached tensor changed in place is used by the recompute without an error: wrong gradients"
UPSTREAM_TESTS = ["test_autograd.py::TestSelectiveActivationCheckpoint::test_version_counter"]


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    return _torch.create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=True)
