"""The reference's selective checkpointing, with the offload policies taken as recompute policies: the
output is neither saved nor offloaded, but recomputed in backward (what torch's eager mode does,
pytorch/pytorch#185015). Built on the reference, which offloads: torch itself fails the clause."""

import reference_impl as _reference
from reference_impl import *  # noqa: F403

TARGET_CLAUSES = ["sac.offload-not-recomputed"]
BREAKS = "an op whose policy is MUST_CPU_OFFLOAD or PREFER_CPU_OFFLOAD is recomputed in backward instead of reloaded"

_OFFLOAD = {_reference.CheckpointPolicy.MUST_CPU_OFFLOAD, _reference.CheckpointPolicy.PREFER_CPU_OFFLOAD}


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    if callable(policy_fn_or_list):
        policy = policy_fn_or_list

        def policy_fn_or_list(ctx, op, *args, **kwargs):
            answer = policy(ctx, op, *args, **kwargs)
            return _reference.CheckpointPolicy.PREFER_RECOMPUTE if answer in _OFFLOAD else answer

    return _reference.create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation)
