"""Smart gradient checkpointing runs use_reentrant=False as reentrant: layers over frozen inputs get no gradient

unsloth_zoo's patch_unsloth_smart_gradient_checkpointing() replaces torch.utils.checkpoint.checkpoint by
unsloth_checkpoint, "Unsloth's drop-in for torch.utils.checkpoint.checkpoint", which sets use_reentrant = True
whatever the caller passes ("Fixes transformers 5.2 which defaults use_reentrant=False") and runs its reentrant
UnslothCheckpointFunction. A caller's use_reentrant=False therefore gets the reentrant variant's documented
limitation: when no input of the region requires grad (a block over frozen embeddings, as under LoRA), the region's
output does not require grad and its parameters get no gradient, silently (no error, no warning: the Function has
no check of its inputs). torch.autograd.grad through the region is refused too.

Documentation: unsloth_checkpoint's docstring calls it a drop-in for torch.utils.checkpoint.checkpoint, whose
docstring (https://docs.pytorch.org/docs/stable/checkpoint.html) says: "At least one input and output must have
requires_grad=True for the reentrant variant. If this condition is unmet, the checkpointed part of the model will
not have gradients. The non-reentrant version does not have this requirement."

Steps: python unsloth_silent_reentrant_switch.py                                (the patched checkpoint: exits 1)
       python unsloth_silent_reentrant_switch.py --impl torch.utils.checkpoint  (torch's own: exits 0)
  On a machine without CUDA the script sets unsloth_zoo's CPU variables (UNSLOTH_ZOO_DISABLE_GPU_INIT,
  UNSLOTH_DISABLE_PINNED_MEMORY, UNSLOTH_DISABLE_DOUBLE_BUFFER) and gives the patch its buffer dtype (bfloat16).
Expected: checkpoint(block, x, use_reentrant=False) with a frozen x: block.weight.grad equals the un-checkpointed
  run's, as with torch's checkpoint.
Actual (unsloth-zoo 2026.10.9, torch 2.13.0, CPU): block.weight.grad is None, silently.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import platform
import sys

import torch

PACKAGE = "unsloth_zoo.gradient_checkpointing"
CPU_VARIABLES = ("UNSLOTH_ZOO_DISABLE_GPU_INIT", "UNSLOTH_DISABLE_PINNED_MEMORY", "UNSLOTH_DISABLE_DOUBLE_BUFFER")


def checkpoint_from(name: str):
    """torch.utils.checkpoint.checkpoint: torch's own, or as unsloth_zoo's smart patch leaves it."""
    if name == PACKAGE:
        if not torch.cuda.is_available():
            for variable in CPU_VARIABLES:
                os.environ.setdefault(variable, "1")
        importlib.import_module(name).patch_unsloth_smart_gradient_checkpointing(torch.bfloat16)
        print(f"unsloth-zoo {importlib.metadata.version('unsloth-zoo')}")
    return importlib.import_module("torch.utils.checkpoint").checkpoint  # looked up after the patch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default=PACKAGE, help=f"{PACKAGE} (default: its smart patch) or torch.utils.checkpoint")
    name = parser.parse_args().impl
    checkpoint = checkpoint_from(name)
    print(f"torch {torch.__version__}, Python {platform.python_version()}, checkpoint: {name}")

    torch.manual_seed(0)
    block, head = torch.nn.Linear(4, 4), torch.nn.Linear(4, 1)  # trainable; x is a frozen embedding's output
    x = torch.randn(2, 4)
    head(checkpoint(block, x, use_reentrant=False)).sum().backward()
    gradient, block.weight.grad = block.weight.grad, None
    head(block(x)).sum().backward()
    print("expected: block.weight.grad of the un-checkpointed run")
    if gradient is None:
        print("actual:   block.weight.grad is None (the region ran as the reentrant variant; nothing warned)")
        return 1
    right = torch.allclose(gradient, block.weight.grad)
    print(f"actual:   block.weight.grad {'as expected' if right else 'differs'}")
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
