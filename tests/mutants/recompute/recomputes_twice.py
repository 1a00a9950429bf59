"""Every recompute runs the function twice (the first run thrown away)."""

import torch
import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["recompute.once-per-backward"]
BREAKS = "the backward runs each checkpointed function twice"


def checkpoint(function, *args, **kwargs):
    calls = []

    def twice_in_backward(*inner_args, **inner_kwargs):
        if calls:  # not the forward: a wasted extra run, under no_grad so it saves nothing
            with torch.no_grad():
                function(*inner_args, **inner_kwargs)
        calls.append(True)
        return function(*inner_args, **inner_kwargs)

    return _torch.checkpoint(twice_in_backward, *args, **kwargs)
