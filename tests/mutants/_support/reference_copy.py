"""Private copies of the reference's non-reentrant frame and of its API bound to that copy, for mutants that break
one line of the reference: a mutant patches the copy and exports the copy's API, so the reference itself stays
untouched in the process (the mutant runs share it with everything else)."""

import importlib.util

import reference_impl.api as _api
import reference_impl.non_reentrant as _non_reentrant


def _private_copy(module, name):
    spec = importlib.util.spec_from_file_location(name, module.__file__)
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    return copy


def private_reference(name):
    """(frame, api): copies of reference_impl.non_reentrant and reference_impl.api, the api calling that frame."""
    frame = _private_copy(_non_reentrant, f"_{name}_non_reentrant")
    api = _private_copy(_api, f"_{name}_api")
    api.non_reentrant = frame
    return frame, api
