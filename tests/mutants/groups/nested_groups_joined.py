"""A GraphExecGroup entered inside another one silently joins the outer group instead of refusing."""

import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["groups.nesting-rejected"]
BREAKS = "nested GraphExecGroups are accepted: the inner one is ignored"


class GraphExecGroup(_torch.GraphExecGroup):
    def __enter__(self):
        self._joined = _torch.GraphExecGroup._get_current_group() is not None
        return self if self._joined else super().__enter__()

    def __exit__(self, *exc):
        if not self._joined:
            super().__exit__(*exc)
