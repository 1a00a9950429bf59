"""Checkpointing: a backward that reaches only a later output raises IndexError: pop from an empty deque

torchgpipe's Checkpointing pair joins Recompute to the first output only (Checkpointing.recompute forks and joins
batch[0] with Recompute's phony). When the loss depends on another output of a checkpointed partition and not on
the first, autograd never runs Recompute.backward, so Checkpoint.backward pops the empty `recomputed` deque:
IndexError: pop from an empty deque. The same happens when the first output is integral (it can carry no gradient,
so nothing reaches the phony): an (indices, values) or (mask, values) output cannot be trained through.

Documentation: torchgpipe's checkpoint takes "a tensor or a tuple of tensors" as input and output
(TensorOrTensors, torchgpipe/checkpoint.py); its helper checkpoint() is "a simple interface like
torch.utils.checkpoint.checkpoint", whose page (https://docs.pytorch.org/docs/stable/checkpoint.html) says:
"the unsaved tensors are recomputed by re-invoking function in the backward pass as needed for gradient
computation" (whichever output the loss uses).

Steps: pip install torchgpipe==0.0.7 (torch held), then
       python torchgpipe_backward_through_a_later_output.py                                (torchgpipe: exits 1)
       python torchgpipe_backward_through_a_later_output.py --impl torch.utils.checkpoint  (torch: exits 0)
  kakaobrain/torchgpipe is archived; torch's fork of it (torch.distributed.pipeline.sync) has since been removed
  from torch, so this report documents the behaviour for its remaining users.
Expected: out[1].sum().backward() gives x the gradient of cos's sum, -sin(x).
Actual (this script, torchgpipe 0.0.7, torch 2.13.0+cpu, Python 3.11, 2026-11-28): IndexError: pop from an empty
  deque.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.metadata
import platform
import sys

import torch

PACKAGE = "torchgpipe.checkpoint"


def checkpoint_from(name: str):
    module = importlib.import_module(name)
    if name == PACKAGE:
        print(f"torchgpipe {importlib.metadata.version('torchgpipe')}")
        return module.checkpoint  # checkpoint(function, input): one tensor or a tuple of tensors
    return functools.partial(module.checkpoint, use_reentrant=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default=PACKAGE, help=f"{PACKAGE} (default) or torch.utils.checkpoint")
    name = parser.parse_args().impl
    checkpoint = checkpoint_from(name)
    print(f"torch {torch.__version__}, Python {platform.python_version()}, checkpoint: {name}")

    x = torch.randn(2, 3, generator=torch.Generator().manual_seed(0), requires_grad=True)
    out = checkpoint(lambda t: (t.sin(), t.cos()), x)
    print("expected: out[1].sum().backward() gives x.grad == -sin(x)")
    try:
        out[1].sum().backward()  # the loss uses the second output only
    except IndexError as error:  # the finding
        print(f"actual:   IndexError: {error}")
        return 1
    right = x.grad is not None and torch.allclose(x.grad, -x.detach().sin())
    print(f"actual:   x.grad {'as expected' if right else x.grad}")
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
