"""The reference's non-reentrant checkpoint with a GraphExecGroup key written as a dataclass without fields: every
instance compares equal and hashes alike, so a region recomputed under one group is taken as recomputed under any
later one, whose backward then finds its saved tensors taken (torch's upstream scenario: a new group made after the
old one was collected). Built on a private copy of the reference."""

import dataclasses
import types

from reference_impl import *  # noqa: F403
from reference_impl import groups as _groups
from tests.mutants._support.reference_copy import private_reference

TARGET_CLAUSES = ["groups.recompute-at-most-once"]
BREAKS = "every GraphExecGroup is equal to every other as a key: a later group shares an earlier one's recompute"

_frame, _api = private_reference("every_group_equal")


@dataclasses.dataclass(frozen=True)
class _GroupKey:  # no fields: dataclass's __eq__ and __hash__ make all instances one key
    pass


def _active_group_key():
    return None if _groups.active_group() is None else _GroupKey()


_frame.groups = types.SimpleNamespace(active_group=_active_group_key, GraphExecGroup=_GroupKey)
checkpoint, checkpoint_sequential, CheckpointError = _api.checkpoint, _api.checkpoint_sequential, _frame.CheckpointError
