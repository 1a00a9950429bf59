"""patch_gradient_checkpointing: the recompute draws new dropout masks (no RNG stash), so the gradients are wrong

unsloth_zoo's patch_gradient_checkpointing() replaces torch.utils.checkpoint.checkpoint by
unsloth_gradient_checkpoint, which runs Unsloth_Gradient_Checkpointer: its backward re-runs the function under
enable_grad without restoring the RNG state the forward started from, and it drops the preserve_rng_state keyword.
A random op in the region (dropout: the models' attention and hidden dropout, LoRA dropout) draws another mask in
the recompute, so the gradients follow that mask, not the one that made the output: silently wrong gradients, and
the default generator ends advanced by the recompute's draws.

Documentation: the patch replaces torch.utils.checkpoint.checkpoint, whose page
(https://docs.pytorch.org/docs/stable/checkpoint.html) says: "By default, checkpointing includes logic to juggle
the RNG state such that checkpointed passes making use of RNG (through dropout for example) have deterministic
output as compared to non-checkpointed passes." (preserve_rng_state: "Default: True").

Steps: python unsloth_gradient_checkpoint_no_rng_stash.py                                (the patch: exits 1)
       python unsloth_gradient_checkpoint_no_rng_stash.py --impl torch.utils.checkpoint  (torch's own: exits 0)
  On a machine without CUDA the script sets unsloth_zoo's CPU variables (UNSLOTH_ZOO_DISABLE_GPU_INIT,
  UNSLOTH_DISABLE_PINNED_MEMORY, UNSLOTH_DISABLE_DOUBLE_BUFFER).
Expected: checkpoint(f, x) with a dropout in f gives the output and x.grad of the un-checkpointed run from the same
  seed.
Actual (unsloth-zoo 2026.10.9, torch 2.13.0, CPU): the output is equal, x.grad differs in about half of its
  elements (the recompute's dropout mask).
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
SEED = 0


def checkpoint_from(name: str):
    """torch.utils.checkpoint.checkpoint: torch's own, or as unsloth_zoo's patch_gradient_checkpointing leaves it."""
    if name == PACKAGE:
        if not torch.cuda.is_available():
            for variable in CPU_VARIABLES:
                os.environ.setdefault(variable, "1")
        importlib.import_module(name).patch_gradient_checkpointing()
        print(f"unsloth-zoo {importlib.metadata.version('unsloth-zoo')}")
    return importlib.import_module("torch.utils.checkpoint").checkpoint  # looked up after the patch


def region(x):
    return torch.nn.functional.dropout(x.sin(), 0.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default=PACKAGE, help=f"{PACKAGE} (default: its patch) or torch.utils.checkpoint")
    name = parser.parse_args().impl
    checkpoint = checkpoint_from(name)
    print(f"torch {torch.__version__}, Python {platform.python_version()}, checkpoint: {name}")

    x = torch.randn(1000, generator=torch.Generator().manual_seed(1), requires_grad=True)
    x_plain = x.detach().clone().requires_grad_()
    torch.manual_seed(SEED)
    out = checkpoint(region, x, use_reentrant=True)
    out.sum().backward()
    torch.manual_seed(SEED)
    plain = region(x_plain)
    plain.sum().backward()
    differing = int((x.grad != x_plain.grad).sum())
    print("expected: the output and x.grad of the un-checkpointed run from the same seed")
    print(f"actual:   output {'equal' if torch.equal(out, plain) else 'differs'}, x.grad "
          + (f"differs in {differing} of {x.numel()} elements" if differing else "equal"))
    return 0 if torch.equal(out, plain) and not differing else 1


if __name__ == "__main__":
    sys.exit(main())
