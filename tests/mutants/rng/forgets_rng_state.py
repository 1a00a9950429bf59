"""Never stashes the RNG state: the recompute draws fresh dropout masks."""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["rng.same-gradients"]
BREAKS = "ignores preserve_rng_state=True, so dropout masks differ in the recompute"
UPSTREAM_TESTS = ["test_utils.py::TestCheckpoint::test_checkpoint_rng_cpu"]


def checkpoint(function, *args, **kwargs):
    kwargs["preserve_rng_state"] = False
    return _checkpoint(function, *args, **kwargs)
