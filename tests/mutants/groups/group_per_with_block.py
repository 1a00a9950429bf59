"""GraphExecGroup groups the backwards of one `with` block, not of one instance: an instance entered
twice is two groups, and the region is recomputed in each."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["groups.recompute-at-most-once"]
BREAKS = "each `with` block of one GraphExecGroup instance is a fresh group, so the region is recomputed again"


class GraphExecGroup:
    def __enter__(self):
        self._block = _torch.GraphExecGroup()
        return self._block.__enter__()

    def __exit__(self, *exc):
        return self._block.__exit__(*exc)
