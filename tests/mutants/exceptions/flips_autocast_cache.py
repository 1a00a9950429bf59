"""Flips torch's autocast cache switch (torch.set_autocast_cache_enabled) on every call and leaves it flipped:
a global setting no hand-kept list named, which the oracle reads since it derives the process state from
torch's getters (torch.is_autocast_cache_enabled; issue 35). The switch is harmless to the tests that run
after this mutant in the same process (the cache only saves recasting weights under autocast), unlike
cudnn.benchmark or the deterministic-algorithms switch."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["exceptions.no-leftover-state"]
BREAKS = "every call flips torch's autocast cache switch and leaves it flipped"


def checkpoint(function, *args, **kwargs):
    torch.set_autocast_cache_enabled(not torch.is_autocast_cache_enabled())
    return _checkpoint(function, *args, **kwargs)
