"""Selective checkpointing that ignores its policy: every op is recomputed, as in plain checkpointing."""

import contextlib

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["sac.save-not-recomputed"]
BREAKS = "ops whose policy is MUST_SAVE/PREFER_SAVE are recomputed in backward anyway"
UPSTREAM_TESTS = ["test_autograd.py::TestSelectiveActivationCheckpoint::test_bad_inputs"]


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    return contextlib.nullcontext(), contextlib.nullcontext()
