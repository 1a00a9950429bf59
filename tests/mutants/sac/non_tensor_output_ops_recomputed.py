"""Selective checkpointing that caches only ops returning tensors alone: an op whose outputs include a
Python value (a custom op returning (tensor, int)) is recomputed whatever the policy says, as a cache
that stores tensor outputs only must do (torch's test_function_with_non_tensor_output)."""

import torch
from torch.utils.checkpoint import CheckpointPolicy
from torch.utils.checkpoint import create_selective_checkpoint_contexts as _contexts

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)

TARGET_CLAUSES = ["sac.save-not-recomputed"]
BREAKS = "an op with a non-tensor output is recomputed although the policy saves it"
UPSTREAM_TESTS = ["test_autograd.py::TestSelectiveActivationCheckpoint::test_function_with_non_tensor_output"]

_TENSOR = torch._C.TensorType.get()


def _returns_tensors_only(op):
    return all(r.type.isSubtypeOf(_TENSOR) for r in op._schema.returns)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    _contexts(policy_fn_or_list, allow_cache_entry_mutation)  # torch's checks of the argument, as before
    if isinstance(policy_fn_or_list, list):
        listed = policy_fn_or_list
        decide = lambda ctx, op, *args, **kwargs: (  # noqa: E731
            CheckpointPolicy.MUST_SAVE if op in listed else CheckpointPolicy.PREFER_RECOMPUTE)
    else:
        decide = policy_fn_or_list

    def policy(ctx, op, *args, **kwargs):
        decision = decide(ctx, op, *args, **kwargs)
        return decision if _returns_tensors_only(op) else CheckpointPolicy.PREFER_RECOMPUTE

    return _contexts(policy, allow_cache_entry_mutation)
