"""Refuses, while recomputing, the saved-tensor hooks the function enters itself (torch.autograd.graph.
save_on_cpu inside the checkpointed function), as an implementation does that forbids hooks it does not own
during its recompute: the forward runs, backward fails. Hooks around the checkpoint call, and checkpoint's
own hooks, are untouched (torch's test_save_on_cpu_and_checkpoint)."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls, patched, recomputes_under

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "saved-tensor hooks the function enters itself (save_on_cpu) are refused when it is recomputed"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_save_on_cpu_and_checkpoint"]

_hooks = torch.autograd.graph.saved_tensors_hooks


def _refusing_foreign_hooks(enter):
    def refusing(self):
        if type(self).__module__ != "torch.utils.checkpoint":  # checkpoint's own (nested checkpoints) pass
            raise RuntimeError("saved tensor hooks are not supported inside a recomputed checkpoint region")
        return enter(self)

    return refusing


def checkpoint(function, *args, **kwargs):
    refuse = recomputes_under(lambda: patched(_hooks, "__enter__", _refusing_foreign_hooks))
    return _checkpoint(on_calls(function, refuse), *args, **kwargs)
