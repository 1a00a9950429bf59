"""The held-out set: broken implementations written from real bug reports, to measure the suite on bugs it was
not written for (issue 44). Each is torch's checkpoint with one bug that a report describes, shown only under
the report's condition, and declares::

    REPORT = "owner/repo#N"      # the report it is written from (its docstring gives the address)
    KIND = "module-mode"          # the kind of program feature the bug needs (docs/BUG_SURVEY.md)
    BREAKS = "one line: what it gets wrong, and when"

    def witness(api): ...         # a small program the bug shows in, run through `api`: a plain value that
                                  # differs between this module and torch.utils.checkpoint

They name no clause, on purpose: they were written from the survey, without reading the suite, and are not the
suite's own proof (tests/mutants/ is). tests/zoo/test_heldout.py checks that each one's bug shows; how many the
suite flags is measured by ``python benchmarks/heldout.py`` (docs/MEASUREMENTS.md), not asserted in CI.
"""

import importlib
import pkgutil


def heldout_names() -> list[str]:
    """The module names of the held-out set (``tests.heldout.<name>``)."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def load(name: str):
    return importlib.import_module(f"{__name__}.{name}")
