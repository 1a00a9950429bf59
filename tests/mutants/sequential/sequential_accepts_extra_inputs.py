"""checkpoint_sequential keeps the old signature (functions, segments, *inputs): extra positional
inputs are accepted, and all but the first silently ignored."""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint_sequential as _checkpoint_sequential

TARGET_CLAUSES = ["sequential.single-input"]
BREAKS = "extra positional inputs are accepted (and dropped) instead of raising TypeError"


def checkpoint_sequential(functions, segments, input, *ignored, use_reentrant=None, **kwargs):
    return _checkpoint_sequential(functions, segments, input, use_reentrant=use_reentrant, **kwargs)
