"""Drops the None items of a tuple output, as a checkpoint that filters the outputs it hands autograd and
returns the filtered tuple: the caller unpacks the wrong number of items, in the wrong places."""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["nontensor.outputs-unchanged"]
BREAKS = "None items of a tuple output are dropped"
UPSTREAM_TESTS = ["test_utils.py::TestCheckpoint::test_checkpoint_non_tensor_inputs_outputs"]


def checkpoint(function, *args, **kwargs):
    out = _checkpoint(function, *args, **kwargs)
    return tuple(o for o in out if o is not None) if isinstance(out, tuple) else out
