"""Non-reentrant: recomputed tensors live as long as the region's saved state, so with
retain_graph=True they are kept for as long as the graph is.

The design torch's own notes weigh and reject ("Rule 4" in torch/utils/checkpoint.py: recomputed
tensors as values of a WeakKeyDictionary whose keys autograd frees "as long as retain_graph=False"):
correct with retain_graph=False, holding every recomputed activation between backwards otherwise.
"""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.hoard import Hoard

TARGET_CLAUSES = ["memory.recomputed-freed-with-retained-graph"]
BREAKS = "with retain_graph=True the non-reentrant recompute's tensors are kept while the graph lives"


class _KeptWithRegion:
    """The function, holding what its recomputes make. torch keeps a non-reentrant region's state (and
    so this object) until backward has released the region's saved tensors: at once, unless retained."""

    def __init__(self, function):
        self.function, self.calls, self.kept = function, 0, []

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == 1:
            return self.function(*args, **kwargs)
        with Hoard(self.kept):
            return self.function(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False:
        function = _KeptWithRegion(function)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
