"""The mutant zoo: deliberately broken implementations, each violating one documented behaviour.

Each mutant is an implementation (usable as ``--impl=tests.mutants.<area>.<name>``), filed under the
area of its first target clause, that declares::

    TARGET_CLAUSES = ["rng.same-gradients"]   # the clause(s) whose tests must flag it
    BREAKS = "one line: what it gets wrong"

and, where it is the floor's proof for one of torch's own checkpoint tests (docs/UPSTREAM_TESTS.md), names them::

    UPSTREAM_TESTS = ["test_utils.py::TestCheckpoint::test_checkpoint_trigger"]   # each fails on this mutant

and otherwise behaves like torch.utils.checkpoint (the usual base: ``from tests.mutants._support.base
import *``, then override the one broken name). ``_support/`` holds the helpers mutants are built
from; they are not mutants themselves. The meta-test tests/zoo/test_mutants.py runs the suite's tests of TARGET_CLAUSES against each mutant and
asserts that every target clause records at least one failure; benchmarks/upstream_floor.py runs torch's tests
against the mutants that name them.
"""

import importlib
import pkgutil


def mutant_names() -> list[str]:
    """``<area>.<name>`` of every mutant."""
    names = []
    for area in pkgutil.iter_modules(__path__):
        if area.ispkg and not area.name.startswith("_"):
            package = importlib.import_module(f"{__name__}.{area.name}")
            names += [f"{area.name}.{m.name}" for m in pkgutil.iter_modules(package.__path__)]
    return sorted(names)


def upstream_floor() -> dict[str, list[str]]:
    """{mutant: the upstream tests it names} for the mutants that name some (UPSTREAM_TESTS)."""
    modules = {name: importlib.import_module(f"{__name__}.{name}") for name in mutant_names()}
    return {name: list(m.UPSTREAM_TESTS) for name, m in modules.items() if getattr(m, "UPSTREAM_TESTS", None)}
