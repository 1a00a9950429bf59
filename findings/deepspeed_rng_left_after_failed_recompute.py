"""deepspeed.checkpointing.checkpoint: a recompute that raises leaves the global RNG at the forward's state

DeepSpeed's CheckpointFunction.backward (and non_reentrant_checkpoint's unpack hook likewise) saves the backward's RNG state, sets the CPU (and CUDA) generator to the
state stashed at the forward, runs the recompute, and only then sets the backward's state back, without
try/finally. When the recompute raises (a region that fails in backward, an out-of-memory error caught and retried
by a training loop), the global generator is left at the forward's state: every later draw in the process repeats
the numbers the forward drew (the same dropout masks again, the same "random" initialization).

Documentation: torch's checkpoint page (https://docs.pytorch.org/docs/stable/checkpoint.html), whose
CheckpointFunction DeepSpeed's was "adapted from" (its docstring): checkpointing "stashes and restores" the RNG state "during each checkpoint"
so that the recompute's random ops draw what the forward's drew; the stash is the checkpoint's own state, and torch
scopes it to the recompute (torch.random.fork_rng), so the caller's generator is untouched whatever the recompute
does.

Steps: DS_BUILD_OPS=0 pip install deepspeed==0.19.8 (torch held), then
       python deepspeed_rng_left_after_failed_recompute.py                                (DeepSpeed: exits 1)
       python deepspeed_rng_left_after_failed_recompute.py --impl torch.utils.checkpoint  (torch, use_reentrant=True: exits 0)
Expected: after the failed backward, the global generator is where it was before the backward (a draw then gives
  the numbers a draw before the backward would have given).
Actual (this script, deepspeed 0.19.8, torch 2.13.0+cpu, Python 3.11, 2026-11-28): the generator is back at the
  state stashed at the forward, so the next dropout draws the forward's mask again.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.metadata
import platform
import sys

import torch

PACKAGE = "deepspeed.runtime.activation_checkpointing.checkpointing"  # deepspeed.checkpointing


class Region(torch.nn.Module):
    """Dropout, or, once armed, a failure before it: the recompute in backward raises."""

    def __init__(self):
        super().__init__()
        self.armed = False

    def forward(self, x):
        if self.armed:
            raise ValueError("the region fails in the recompute")
        return torch.nn.functional.dropout(x, 0.5, training=True)


def checkpointed(name: str, region: Region):
    if name == PACKAGE:
        print(f"deepspeed {importlib.metadata.version('deepspeed')}")
        return functools.partial(importlib.import_module(name).checkpoint, region)
    return functools.partial(importlib.import_module(name).checkpoint, region, use_reentrant=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default=PACKAGE, help=f"{PACKAGE} (default) or torch.utils.checkpoint")
    name = parser.parse_args().impl
    print(f"torch {torch.__version__}, Python {platform.python_version()}, checkpoint: {name}")
    region = Region()
    run = checkpointed(name, region)

    torch.manual_seed(0)
    x = torch.randn(4, 8, requires_grad=True)
    out = run(x)
    before_backward = torch.get_rng_state()
    region.armed = True
    try:
        out.sum().backward()
    except ValueError:
        pass  # the recompute failed, as the region was told to
    left = torch.get_rng_state()
    print("expected: the global generator's state after the failed backward is its state before the backward")
    print(f"actual:   {'unchanged' if torch.equal(left, before_backward) else 'changed (back at the forward stash)'}")
    return 0 if torch.equal(left, before_backward) else 1


if __name__ == "__main__":
    sys.exit(main())
