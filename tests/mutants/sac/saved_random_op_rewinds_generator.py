"""The reference's selective checkpointing without its generator bookkeeping: a saved random op is
skipped in the recompute and the generator is left where the recompute's start put it, so the random
ops after it draw what the saved one drew in the forward. What torch 2.13's eager selective
checkpointing does (docs/THIRD_PARTY.md, "torch: a saved random op"); built on the reference, which
gets it right."""

import contextlib

import reference_impl as _reference
from reference_impl import *  # noqa: F403

TARGET_CLAUSES = ["sac.same-gradients"]
BREAKS = "a random op saved by the policy leaves the generator unadvanced in the recompute, so later random ops draw other numbers"


@contextlib.contextmanager
def _forgetting_generators(forward):
    with forward:
        yield
    for per_index in forward.cache.entries.values():
        for entry in per_index.values():
            entry.generator = None


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    forward, recompute = _reference.create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation)
    return _forgetting_generators(forward), recompute
