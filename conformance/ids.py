"""Implementation ids: what the expectations, the results and the report key an implementation on.

An implementation has one canonical id, whatever spelling selected it: an adapter's short name
(``torch_composable``, also for ``--impl=conformance.adapters.torch_composable``), a module's declared
``CONFORMANCE_ID``, or else its module name. This module imports nothing: the report and the
expectations use it without importing the ``--impl`` binding (conformance/binding.py, which loads modules).
"""

from __future__ import annotations

DEFAULT_IMPL = "reference_impl"
ADAPTERS_PACKAGE = "conformance.adapters"
ID_ATTRIBUTE = "CONFORMANCE_ID"


def canonical_id(module_name: str) -> str:
    """The id of the implementation a module name (as given, or resolved) stands for, without
    importing it: adapters go by their short name. (A module's CONFORMANCE_ID, if any, is read at load.)"""
    return module_name.removeprefix(f"{ADAPTERS_PACKAGE}.")
