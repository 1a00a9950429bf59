"""torch's checkpoint as it is: its recompute re-runs the function with its side effects, so a module's
buffers (BatchNorm's running statistics and batch counter) are updated a second time in backward.

torch's own run declares this as a deviation (expectations.toml); as a mutant it carries no declaration,
and shows that the module sweep flags a recompute that writes state from outside the region.
"""

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["modulestate.buffers-match"]
BREAKS = "the recompute updates BatchNorm's running statistics again: buffers after a step differ from the un-checkpointed run"
