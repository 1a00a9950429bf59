"""The mutant zoo: deliberately broken implementations, each violating one documented behaviour.

Each mutant is an implementation (usable as ``--impl=tests.mutants.<area>.<name>``), filed under the
area of its first target clause, that declares::

    TARGET_CLAUSES = ["rng.same-gradients"]   # the clause(s) whose tests must flag it
    BREAKS = "one line: what it gets wrong"

and otherwise behaves like torch.utils.checkpoint (the usual base: ``from tests.mutants._support.base
import *``, then override the one broken name). ``_support/`` holds the helpers mutants are built
from; they are not mutants themselves. The meta-test tests/test_mutants.py runs the suite's tests of TARGET_CLAUSES against each mutant and
asserts that every target clause records at least one failure.
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
