"""The mutant zoo: deliberately broken implementations, each violating one documented behaviour.

Each module here is an implementation (usable as ``--impl=tests.mutants.<name>``) that declares::

    TARGET_CLAUSES = ["rng.same-gradients"]   # the clause(s) whose tests must flag it
    BREAKS = "one line: what it gets wrong"

and otherwise behaves like torch.utils.checkpoint (see _torch_based.py for the usual base). The
meta-test tests/test_mutants.py runs the suite's tests of TARGET_CLAUSES against each mutant and
asserts that every target clause records at least one failure.
"""

import pkgutil


def mutant_names() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
