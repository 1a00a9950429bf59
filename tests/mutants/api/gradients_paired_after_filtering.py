"""Reentrant, but its backward pairs the output gradients with the recomputed outputs after leaving out
those that do not require grad: the n-th output requiring grad gets the n-th tensor output's gradient. A
mask, indices or lengths returned before the differentiable outputs shift every gradient by one."""

from tests.mutants._support.mini_reentrant import Switches, reentrant_beside_torch
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "reentrant: an integral output before the differentiable ones shifts their gradients"

checkpoint = reentrant_beside_torch(Switches(pair_gradients_by_output=False))
