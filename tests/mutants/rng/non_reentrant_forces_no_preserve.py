"""The non-reentrant variant ignores preserve_rng_state and never stashes the RNG state (as if it were
always False): the recompute draws other dropout masks, so gradients differ, silently. The reentrant variant
is torch's. Issue 34's example of one bug that must read as one cause."""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["rng.same-gradients"]
BREAKS = "use_reentrant=False forces preserve_rng_state=False"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False:
        kwargs["preserve_rng_state"] = False
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
