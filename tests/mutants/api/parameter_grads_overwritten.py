"""Reentrant, but its backward overwrites the .grad of the parameters used inside the region instead of
accumulating into it, as a hand-written backward that assigns ``p.grad = ...`` does: what an earlier
micro-batch left there, or what a tied weight got from its use outside the region, is lost."""

from tests.mutants._support.mini_reentrant import Switches, reentrant_beside_torch
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "reentrant: the .grad of parameters used inside the region is overwritten, not accumulated into"

checkpoint = reentrant_beside_torch(Switches(keep_parameter_grads=False))
