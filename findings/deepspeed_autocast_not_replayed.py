"""deepspeed.checkpointing.checkpoint: the recompute ignores the forward's autocast (it runs in another dtype)

deepspeed.checkpointing.checkpoint runs DeepSpeed's CheckpointFunction, "adapted from torch.utils.checkpoint" (its
docstring), whose backward re-runs the function under torch.enable_grad() only: it neither records the forward's
autocast state nor re-enters it, as torch's CheckpointFunction does. A region run under torch.autocast is recomputed
under whatever autocast is active at backward (usually none): its matmuls run in float32 where the forward ran them
in bfloat16, so the gradients are those of another computation than the one that made the output (and the
non-reentrant non_reentrant_checkpoint, which has no autocast handling either, fails: "expected m1 and m2 to have
the same dtype").

Documentation: torch's checkpoint page (https://docs.pytorch.org/docs/stable/checkpoint.html), which
CheckpointFunction was adapted from: "If the :attr:`function` invocation during the backward pass differs from the
forward pass, e.g., due to a global variable, the checkpointed version may not be equivalent, potentially causing
an error being raised or leading to silently incorrect gradients." torch therefore replays the forward's autocast
state in the recompute; DeepSpeed's copy lost that.

Steps: DS_BUILD_OPS=0 pip install deepspeed==0.19.8 (torch held), then
       python deepspeed_autocast_not_replayed.py                                (DeepSpeed: exits 1)
       python deepspeed_autocast_not_replayed.py --impl torch.utils.checkpoint  (torch, use_reentrant=True: exits 0)
Condition: the backward runs outside the autocast block the forward ran in (as a training loop does: autocast
  around the forward and the loss, backward after it). A backward inside the same block recomputes under that very
  autocast, and matches: the script runs both.
Expected: the matmul inside the region runs in bfloat16 in the forward and in the recompute, either way.
Actual (this script, deepspeed 0.19.8, torch 2.13.0+cpu, Python 3.11, 2026-11-28): backward outside the block,
  bfloat16 in the forward and float32 in the recompute; backward inside it, bfloat16 both times.
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


def checkpoint_from(name: str):
    module = importlib.import_module(name)
    if name == PACKAGE:
        print(f"deepspeed {importlib.metadata.version('deepspeed')}")
        return module.checkpoint
    return functools.partial(module.checkpoint, use_reentrant=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default=PACKAGE, help=f"{PACKAGE} (default) or torch.utils.checkpoint")
    name = parser.parse_args().impl
    checkpoint = checkpoint_from(name)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"torch {torch.__version__}, Python {platform.python_version()}, checkpoint: {name}, device {device}")

    linear = torch.nn.Linear(8, 8, device=device)
    dtypes = []  # the matmul's dtype at each run of the region: the forward, then the recompute

    def region(t):
        y = linear(t)
        dtypes.append(y.dtype)
        return y.float()

    def run(backward_inside: bool) -> list:
        dtypes.clear()
        x = torch.randn(4, 8, device=device, requires_grad=True)
        with torch.autocast(device, dtype=torch.bfloat16):
            out = checkpoint(region, x)
            if backward_inside:
                out.sum().backward()
        if not backward_inside:
            out.sum().backward()
        return list(dtypes)

    outside, inside = run(backward_inside=False), run(backward_inside=True)
    print("expected: the region's matmul in bfloat16 in the forward and in the recompute")
    print(f"backward inside the autocast block:                  {' then '.join(map(str, inside))}")
    print(f"backward outside the autocast block (the condition): {' then '.join(map(str, outside))}")
    return 0 if outside == [torch.bfloat16, torch.bfloat16] else 1


if __name__ == "__main__":
    sys.exit(main())
