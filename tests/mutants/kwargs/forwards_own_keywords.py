"""Also passes checkpoint's own keywords to a function that declares parameters of the same names."""

import functools
import inspect

from tests.mutants._support.call_wrappers import OWN_KEYWORDS
from tests.mutants._support.base import *  # noqa: F403  (the whole surface, but checkpoint)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["kwargs.own-keywords-consumed", "kwargs.non-reentrant-options-consumed"]
BREAKS = "forwards preserve_rng_state, use_reentrant, context_fn, ... to functions that accept them"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_checkpointing_without_reentrant_correct_grad"]


def checkpoint(function, *args, **kwargs):
    declared = inspect.signature(function).parameters
    leaked = {k: v for k, v in kwargs.items() if k in (*OWN_KEYWORDS, "use_reentrant") and k in declared}
    return _checkpoint(functools.partial(function, **leaked), *args, **kwargs)
