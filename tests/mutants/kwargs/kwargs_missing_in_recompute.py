"""Non-reentrant: passes keyword arguments to the function in the forward but not in the recompute."""

from tests.mutants._support.call_wrappers import OWN_KEYWORDS, on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["kwargs.non-reentrant-forwarded"]
BREAKS = "the recompute runs the function without its keyword arguments (non-reentrant)"
UPSTREAM_TESTS = [
    "test_autograd.py::TestAutograd::test_checkpointing_without_reentrant_input_requires_grad_True",
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_kwargs_early_stop_False",
    "test_autograd.py::TestNestedCheckpoint::test_nested_checkpoint_kwargs_early_stop_True",
]


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    options = {k: kwargs.pop(k) for k in OWN_KEYWORDS if k in kwargs}
    if use_reentrant or not kwargs:
        return _checkpoint(function, *args, use_reentrant=use_reentrant, **options, **kwargs)

    def forward_only_kwargs(call, fn, *a):
        return fn(*a, **kwargs) if call == 0 else fn(*a)

    return _checkpoint(on_calls(function, forward_only_kwargs), *args, use_reentrant=False, **options)
