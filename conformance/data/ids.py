"""Implementation ids: what the expectations, the results and the report key an implementation on.

An implementation has one canonical id, whatever spelling selected it: an adapter's short name
(``torch_composable``, also for ``--impl=conformance.adapters.torch_composable``), a module's declared
``__conformance__["id"]`` (conformance/plugin/binding.py), or else its module name. This module imports nothing of the harness: the report and the
expectations use it without importing the ``--impl`` binding (conformance/plugin/binding.py, which loads modules).
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_IMPL = "reference_impl"
ADAPTERS_PACKAGE = "conformance.adapters"
SUITE_DIR = Path(__file__).parents[1] / "suite"


def canonical_id(module_name: str) -> str:
    """The id of the implementation a module name (as given, or resolved) stands for, without
    importing it: adapters go by their short name. (A module's declared id, if any, is read at load.)"""
    return module_name.removeprefix(f"{ADAPTERS_PACKAGE}.")


def suite_nodeid(nodeid: str, path) -> str:
    """A suite test's node id as the harness's checkout names it (``conformance/suite/test_x.py::...``), however
    pytest was pointed at the suite: from an installed harness (``--pyargs conformance.suite``) pytest names it
    relative to the package (``test_x.py::...``), and the declarations' ``test`` (expectations.toml) would not match."""
    path = Path(path)
    if not path.is_relative_to(SUITE_DIR):
        return nodeid
    return f"{path.relative_to(SUITE_DIR.parents[1]).as_posix()}::{nodeid.partition('::')[2]}"
