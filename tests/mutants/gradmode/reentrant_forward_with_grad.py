"""Reentrant: runs the function's forward with grad enabled, recording a graph it then throws away."""

import torch

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["gradmode.reentrant-forward-no-grad"]
BREAKS = "the reentrant forward does not run under torch.no_grad()"


def _forward_with_grad(call, function, *args, **kwargs):
    if call == 0:
        with torch.enable_grad():
            return function(*args, **kwargs)
    return function(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant:
        function = on_calls(function, _forward_with_grad)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
