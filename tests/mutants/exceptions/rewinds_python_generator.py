"""Python's generator is "preserved" like torch's, but only half way: the forward stashes `random.getstate()` and
every recompute sets it back before running the function, without restoring the caller's state afterwards. The
function never draws from it, so values and gradients are torch's; but after each backward the caller's
`random.random()` repeats numbers it has already drawn (a data sampler, an augmentation), as if the forward's time
came back. Only a caller that draws from Python's generator between a forward and its backward sees it: the lifecycle
machine's draws (test_lifecycle.py); no generated program of the oracle draws there."""

import random

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

TARGET_CLAUSES = ["exceptions.no-leftover-state"]
BREAKS = "each recompute rewinds Python's global generator to the forward's state and leaves it there"


def checkpoint(function, *args, **kwargs):
    stashed = random.getstate()

    def around(call, function, *args, **kwargs):
        if call > 0:
            random.setstate(stashed)  # the bug: the caller's state is not put back afterwards
        return function(*args, **kwargs)

    return _checkpoint(on_calls(function, around), *args, **kwargs)
