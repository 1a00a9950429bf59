"""checkpoint_sequential with preserve_rng_state=False returns after the checkpointed segments,
without running the last one (a branch that forgot the tail)."""

from tests.mutants._support.sequential_over import _run, even_chunks
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint
from tests.mutants._support.base import checkpoint_sequential as _checkpoint_sequential

TARGET_CLAUSES = ["sequential.same-results"]
BREAKS = "preserve_rng_state=False skips the last segment"


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    if kwargs.get("preserve_rng_state", True):
        return _checkpoint_sequential(functions, segments, input, use_reentrant=use_reentrant, **kwargs)
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    for start, end in even_chunks(len(functions), segments):
        input = checkpoint(_run(functions[start:end]), input, use_reentrant=use_reentrant, preserve_rng_state=False)
    return input
