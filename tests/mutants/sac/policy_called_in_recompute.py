"""Selective checkpointing whose recompute asks the policy again (with is_recompute=True) and obeys
it: an op it now says to recompute runs again instead of being taken from the cache.

The behaviour of earlier torch releases, which called the policy in the recompute too (stateful policies
kept separate forward and recompute counters for it, e.g. torchtitan's "save every other matmul"); the
2.13 docstring says the policy is only called during the forward pass.
"""

import torch.utils.checkpoint as _torch
from torch.utils._python_dispatch import TorchDispatchMode

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["sac.policy-forward-only"]
BREAKS = "the policy function is called again during the recompute, with is_recompute=True, and obeyed there"

_RECOMPUTE = (_torch.CheckpointPolicy.MUST_RECOMPUTE, _torch.CheckpointPolicy.PREFER_RECOMPUTE)


class _AsksAgain(TorchDispatchMode):
    """The recompute: each op asks the policy; a recompute answer runs the op, any other reads the cache."""

    def __init__(self, policy, cached):
        super().__init__()
        self.policy, self.cached = policy, cached

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.policy(_torch.SelectiveCheckpointContext(is_recompute=True), func, *args, **kwargs) in _RECOMPUTE:
            return func(*args, **kwargs)
        return self.cached.__torch_dispatch__(func, types, args, kwargs)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    forward, cached = _torch.create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation)
    if isinstance(policy_fn_or_list, list):
        saved = policy_fn_or_list

        def policy_fn_or_list(ctx, op, *args, **kwargs):
            return _torch.CheckpointPolicy.MUST_SAVE if op in saved else _torch.CheckpointPolicy.PREFER_RECOMPUTE

    return forward, _AsksAgain(policy_fn_or_list, cached)
