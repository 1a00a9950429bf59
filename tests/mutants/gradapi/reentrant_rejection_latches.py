"""torch's reentrant checkpoint whose refusal of torch.autograd.grad latches: once a backward through a
checkpoint has been refused, every later backward through any reentrant checkpoint is refused too, as if
the flag that marks autograd.grad were not reset when that call ended in the error (the bug torch's
test_checkpoint_valid_reset_on_error was written for)."""

import contextlib

import torch.utils.checkpoint as torch_checkpoint

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["gradapi.reentrant-backward-after-rejection"]
BREAKS = "reentrant: after one refused torch.autograd.grad, every later backward through a checkpoint is refused"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_checkpoint_valid_reset_on_error"]

_refused = []  # set for good by the first refusal


class _LatchingCheckpointFunction(torch_checkpoint.CheckpointFunction):
    @staticmethod
    def backward(ctx, *grads):
        if _refused:
            raise RuntimeError("torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` "
                               "parameter to .backward()")
        try:
            return torch_checkpoint.CheckpointFunction.backward(ctx, *grads)
        except RuntimeError:
            _refused.append(True)
            raise


@contextlib.contextmanager
def _latching():
    original = torch_checkpoint.CheckpointFunction
    torch_checkpoint.CheckpointFunction = _LatchingCheckpointFunction
    try:
        yield
    finally:
        torch_checkpoint.CheckpointFunction = original


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if not use_reentrant:
        return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    with _latching():
        return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
