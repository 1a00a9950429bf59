"""preserve_rng_state passed explicitly is read as 'do not preserve' whatever its value (a check for
the keyword's presence instead of its value)."""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["rng.same-gradients"]
BREAKS = "preserve_rng_state=True given explicitly disables the RNG replay"


def checkpoint(function, *args, **kwargs):
    if "preserve_rng_state" in kwargs:
        kwargs["preserve_rng_state"] = False
    return _checkpoint(function, *args, **kwargs)
