"""gradient_checkpoint_scope: ctc_loss's replayed gradient is divided by memory it never filled (NaN or wrong values)

gradient_checkpoint_scope records the aten ops its TorchDispatchMode sees and replays them in backward instead of
re-running the function. ctc_loss with reduction="mean" divides by at::tensor(target_lengths), which ATen makes as
aten.empty plus a copy that does not go through the dispatcher: the scope records only the empty, so the replay
divides the gradient by uninitialized memory. The gradient is NaN, or silently wrong, depending on what that memory
held. (The script fills every fresh floating-point aten.empty with NaN, with a TorchDispatchMode around the whole
run, so that reading uninitialized memory shows the same way each time; torch's checkpoint, under the same mode,
gives no NaN.)

Documentation: gradient_checkpoint_scope's docstring compares it with torch.utils.checkpoint.checkpoint, whose
docstring (https://docs.pytorch.org/docs/stable/checkpoint.html) says: "the unsaved tensors are recomputed by
re-invoking :attr:`function` in the backward pass as needed for gradient computation": the gradients are those of
the un-checkpointed computation.

Steps: pip install returnn==1.20261022.211313 (torch held), then
       python returnn_ctc_loss_replay.py                                (RETURNN: exits 1)
       python returnn_ctc_loss_replay.py --impl torch.utils.checkpoint  (torch, use_reentrant=False: exits 0)
Expected: the gradient of ctc_loss(log_probs) w.r.t. log_probs, finite, equal to the un-checkpointed one.
Actual (this script, returnn 1.20261022, torch 2.13.0+cpu, Python 3.11, 2026-11-28): 2250 NaN elements of 2250 in
  the gradient.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import platform
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

PACKAGE = "returnn.torch.util.gradient_checkpoint"


class FreshMemoryIsNaN(TorchDispatchMode):
    """Fills each new floating-point aten.empty with NaN: a read of memory nobody wrote shows as NaN."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.ops.aten.empty.memory_format and out.is_floating_point():
            out.fill_(float("nan"))
        return out


def checkpoint_from(name: str):
    """checkpoint(function, *args), as the scope's users write it, or torch's non-reentrant checkpoint."""
    module = importlib.import_module(name)
    if name != PACKAGE:
        return lambda function, *args: module.checkpoint(function, *args, use_reentrant=False)
    print(f"returnn {importlib.metadata.version('returnn')}")

    def scoped(function, *args):
        with module.gradient_checkpoint_scope():
            return function(*args)

    return scoped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default=PACKAGE, help=f"{PACKAGE} (default) or torch.utils.checkpoint")
    name = parser.parse_args().impl
    checkpoint = checkpoint_from(name)
    print(f"torch {torch.__version__}, Python {platform.python_version()}, checkpoint: {name}")

    torch.manual_seed(0)
    log_probs = torch.randn(50, 3, 15, dtype=torch.float64).log_softmax(2).detach().requires_grad_()
    targets = torch.randint(1, 15, (3, 30), dtype=torch.int32)

    def loss(x):  # reduction="mean": divides by the target lengths
        return torch.nn.functional.ctc_loss(x, targets, (50, 50, 50), (30, 25, 20))

    (plain,) = torch.autograd.grad(loss(log_probs), log_probs)
    with FreshMemoryIsNaN():  # around both runs alike
        (gradient,) = torch.autograd.grad(checkpoint(loss, log_probs), log_probs)
    nans = int(gradient.isnan().sum())
    right = not nans and torch.allclose(gradient, plain)
    print("expected: the un-checkpointed gradient, no NaN")
    print(f"actual:   {nans} NaN element(s) of {gradient.numel()}, " + ("equal" if right else "differs"))
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
