"""Runs the recompute under the autocast state active when backward runs, not the forward's."""

import torch

from tests.mutants._support.call_wrappers import before_backward, on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["autocast.backward-state-ignored"]
BREAKS = "autocast entered only around backward changes the dtypes of the recompute"


def checkpoint(function, *args, **kwargs):
    state = {}

    def record_backward_autocast():
        state.update(enabled=torch.is_autocast_enabled("cpu"), dtype=torch.get_autocast_dtype("cpu"))

    def recompute_under_backward_state(call, fn, *a, **kw):
        if call == 0 or not state:
            return fn(*a, **kw)
        with torch.autocast("cpu", dtype=state["dtype"], enabled=state["enabled"]):
            return fn(*a, **kw)

    out = _checkpoint(on_calls(function, recompute_under_backward_state), *args, **kwargs)
    return before_backward(out, record_backward_autocast)
