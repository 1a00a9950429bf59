"""Wraps the tensor hooks the function registers (in the forward and in the recompute) so that an exception
one raises during backward reaches the caller as a RuntimeError of the checkpoint's own."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls, patched

TARGET_CLAUSES = ["exceptions.backward-hook-propagates"]
BREAKS = "an exception a hook registered inside the region raises in backward becomes a RuntimeError"


def _wrapping(register_hook):
    def register(tensor, hook):
        def wrapped(grad):
            try:
                return hook(grad)
            except Exception as exc:
                raise RuntimeError(f"a hook registered inside a checkpoint failed: {exc}") from exc

        return register_hook(tensor, wrapped)

    return register


def _hooks_wrapped(call, function, *args, **kwargs):
    with patched(torch.Tensor, "register_hook", _wrapping):
        return function(*args, **kwargs)


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, _hooks_wrapped), *args, **kwargs)
