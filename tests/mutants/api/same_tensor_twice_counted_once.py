"""A tensor passed twice takes part in autograd only at its first position (a checkpoint that
deduplicates its inputs by identity and detaches the repeats)."""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "the second occurrence of a tensor passed twice gets no gradient"


def checkpoint(function, *args, **kwargs):
    seen, deduplicated = set(), []
    for a in args:
        deduplicated.append(a.detach() if id(a) in seen else a)
        seen.add(id(a))
    return _checkpoint(function, *deduplicated, **kwargs)
