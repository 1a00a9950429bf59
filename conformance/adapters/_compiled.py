"""torch.utils.checkpoint run inside a ``torch.compile``d region, as users checkpoint compiled models.

Each top-level call resets dynamo (so no test reuses another's compiled graph or guards) and compiles a
region that calls torch's own ``checkpoint`` / ``checkpoint_sequential`` with the caller's function,
arguments and keywords. A call made while dynamo is already tracing (a checkpoint nested in the
checkpointed function) calls torch directly: dynamo traces it as part of the outer region.

With ``fullgraph=False`` (what users run) dynamo falls back to eager Python wherever it cannot trace (a
graph break), so a passing test may have run partly or wholly eagerly. With ``fullgraph=True`` a graph
break raises instead: the ``*_fullgraph`` diagnostic row shows which tests pass only through such
fallbacks (see docs/THIRD_PARTY.md). Each test's result also carries notes (its protocol's ``notes``, the
harness's hook): every graph break of its calls, read from dynamo's counters, so the report marks a pass that
ran partly eagerly.
"""

from __future__ import annotations

import torch
import torch.utils.checkpoint as torch_checkpoint

from conformance.adapters._support import distribution_version
from conformance.data.capabilities import DEVICES, FEATURES
from conformance.data.registry import VARIANTS

__version__ = distribution_version("torch")
# torch's own checkpoint and checkpoint_sequential, compiled: the whole contract is claimed.
CAPABILITIES = {"variants": list(VARIANTS), "features": list(FEATURES), "devices": list(DEVICES)}


_notes: list[str] = []


def take_notes() -> list[str]:
    """What dynamo fell back on since the last call: each graph break (that part ran as eager Python)."""
    taken = list(_notes)
    _notes.clear()
    return taken


def _graph_breaks() -> dict[str, int]:
    from torch._dynamo.utils import counters

    return dict(counters["graph_break"])


def _first_line(reason: str) -> str:
    return reason.strip().splitlines()[0] if reason.strip() else "(no reason given)"


def _checkpoint_region(function, args, kwargs):
    return torch_checkpoint.checkpoint(function, *args, **kwargs)


def _sequential_region(functions, segments, input, kwargs):
    return torch_checkpoint.checkpoint_sequential(functions, segments, input, **kwargs)


def compiled(backend: str, *, fullgraph: bool = False, configure=None):
    """``(checkpoint, checkpoint_sequential)`` whose top-level calls run in a region compiled this way.
    ``configure`` runs before each compilation (backend options such as inductor's config)."""

    def run(region, direct, *call):
        if torch.compiler.is_compiling():
            return direct()
        torch._dynamo.reset()
        if configure is not None:
            configure()
        before = _graph_breaks()
        try:
            return torch.compile(region, backend=backend, fullgraph=fullgraph)(*call)
        finally:
            _notes.extend(f"graph break, ran eagerly: {_first_line(reason)}"
                          for reason, count in _graph_breaks().items() if count > before.get(reason, 0))

    def checkpoint(function, *args, **kwargs):
        return run(_checkpoint_region, lambda: torch_checkpoint.checkpoint(function, *args, **kwargs),
                   function, args, kwargs)

    def checkpoint_sequential(functions, segments, input, **kwargs):
        return run(_sequential_region,
                   lambda: torch_checkpoint.checkpoint_sequential(functions, segments, input, **kwargs),
                   functions, segments, input, kwargs)

    return checkpoint, checkpoint_sequential


def protocol(name: str) -> dict:
    """A compiled row's ``__conformance__`` (conformance/plugin/binding.py). No re-run with fixed draws (conformance/plugin/rerun.py):
    it runs the test under a Python dispatch mode, under which dynamo does not compile, so the re-run would pass through
    eager torch and charge a compiled failure to the RNG."""
    return {"name": name, "capabilities": CAPABILITIES, "fixed_draws": False, "notes": take_notes}
