"""Runs the recompute under the autocast state active when backward runs, not the forward's."""

import torch

from tests.mutants._support.call_wrappers import map_tensors, on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["autocast.backward-state-ignored"]
BREAKS = "autocast entered only around backward changes the dtypes of the recompute"


class _RecordBackwardAutocast(torch.autograd.Function):
    """Identity on an output; its backward, which runs before the recompute, records the autocast state."""

    @staticmethod
    def forward(ctx, t, state):
        ctx.state = state
        return t.clone()

    @staticmethod
    def backward(ctx, grad):
        ctx.state.update(enabled=torch.is_autocast_enabled("cpu"), dtype=torch.get_autocast_dtype("cpu"))
        return grad, None


def checkpoint(function, *args, **kwargs):
    state = {}

    def recompute_under_backward_state(call, fn, *a, **kw):
        if call == 0 or not state:
            return fn(*a, **kw)
        with torch.autocast("cpu", dtype=state["dtype"], enabled=state["enabled"]):
            return fn(*a, **kw)

    out = _checkpoint(on_calls(function, recompute_under_backward_state), *args, **kwargs)
    return map_tensors(out, lambda t: _RecordBackwardAutocast.apply(t, state) if t.requires_grad else t)
