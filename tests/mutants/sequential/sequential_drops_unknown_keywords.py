"""checkpoint_sequential that drops every keyword argument it does not take (a misspelt preserve_rng_state,
checkpoint's context_fn) instead of rejecting it."""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint_sequential as _checkpoint_sequential

TARGET_CLAUSES = ["sequential.unknown-keywords-rejected"]
BREAKS = "unknown keyword arguments are silently dropped instead of raising"


def checkpoint_sequential(functions, segments, input, use_reentrant=None, preserve_rng_state=True, **dropped):
    return _checkpoint_sequential(functions, segments, input, use_reentrant=use_reentrant,
                                  preserve_rng_state=preserve_rng_state)
