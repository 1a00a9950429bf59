"""checkpoint_sequential has no preserve_rng_state keyword (its signature stops at use_reentrant)."""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint_sequential as _checkpoint_sequential

TARGET_CLAUSES = ["api.keywords", "rng.no-preserve"]
BREAKS = "checkpoint_sequential(..., preserve_rng_state=...) raises TypeError"


def checkpoint_sequential(functions, segments, input, use_reentrant=None):
    return _checkpoint_sequential(functions, segments, input, use_reentrant=use_reentrant)
