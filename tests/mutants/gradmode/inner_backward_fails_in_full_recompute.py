"""Non-reentrant: with early_stop=False, a backward inside the function fails when the recompute re-runs it."""

import contextlib

import torch
import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["gradmode.inner-backward-full-recompute"]
BREAKS = "with early_stop=False the recompute rejects torch.autograd.grad inside the function"


def _rejects_grad(*args, **kwargs):
    raise RuntimeError("backward inside a checkpointed region is not supported during its recompute")


@contextlib.contextmanager
def _no_backward_inside():
    torch.autograd.grad, real = _rejects_grad, torch.autograd.grad
    try:
        yield
    finally:
        torch.autograd.grad = real


def checkpoint(function, *args, use_reentrant=None, early_stop=True, **kwargs):
    if use_reentrant or early_stop:
        return _torch.checkpoint(function, *args, use_reentrant=use_reentrant, early_stop=early_stop, **kwargs)
    forward_done = False

    def run(*inner_args, **inner_kwargs):
        with _no_backward_inside() if forward_done else contextlib.nullcontext():
            return function(*inner_args, **inner_kwargs)

    output = _torch.checkpoint(run, *args, use_reentrant=False, early_stop=False, **kwargs)
    forward_done = True
    return output
