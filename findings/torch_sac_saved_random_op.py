"""Selective checkpointing: random ops after a saved random op draw other numbers in the recompute (wrong gradients)

torch's eager selective activation checkpointing (SAC) gives other gradients than the un-checkpointed run
when its policy saves a random op and random ops follow it in the region. The recompute restores the default
generator to its state at the forward's start, then returns the saved op's cached output without drawing, so
every later random op (dropout, rand, ...) draws the numbers the saved op drew in the forward: another dropout
mask, other gradients, silently. With the saved op last, or drawn from an explicit torch.Generator, the
gradients are right.

Documentation (https://docs.pytorch.org/docs/stable/checkpoint.html):
  create_selective_checkpoint_contexts: "Use this with `torch.utils.checkpoint.checkpoint` to control which
  operations are recomputed during the backward pass."
  The page's note: "By default, checkpointing includes logic to juggle the RNG state such that checkpointed
  passes making use of RNG (through dropout for example) have deterministic output as compared to
  non-checkpointed passes."

Steps: python torch_sac_saved_random_op.py                       (torch.utils.checkpoint: exits 1)
       python torch_sac_saved_random_op.py --impl reference_impl (checkpoint-conformance's reference: exits 0)
Expected: the same output and the same x.grad as the un-checkpointed run from the same seed (preserve_rng_state
  is True by default: the recompute replays the forward's draws).
Actual (torch 2.13.0, CPU): the output is the same, x.grad differs (max |difference| 1.12): the recomputed
  dropout draws the numbers the saved rand drew in the forward, so its mask is not the forward's.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import platform
import sys

import torch

SEED = 0


def region(x):
    """rand (saved: the op list names it), then dropout (recomputed), both from the default generator."""
    return torch.rand(x.shape) * torch.nn.functional.dropout(x.sin(), 0.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="torch.utils.checkpoint",
                        help="a module with torch.utils.checkpoint's API (default: torch.utils.checkpoint)")
    ckpt = importlib.import_module(parser.parse_args().impl)
    print(f"torch {torch.__version__}, Python {platform.python_version()}, checkpoint from {ckpt.__name__}")

    # The documented list form: MUST_SAVE for the ops listed, PREFER_RECOMPUTE for every other op.
    context_fn = functools.partial(ckpt.create_selective_checkpoint_contexts, [torch.ops.aten.rand.default])
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(1), requires_grad=True)
    x_plain = x.detach().clone().requires_grad_()

    torch.manual_seed(SEED)
    out = ckpt.checkpoint(region, x, use_reentrant=False, context_fn=context_fn)
    out.sum().backward()
    torch.manual_seed(SEED)
    plain = region(x_plain)
    plain.sum().backward()

    same_output, same_gradient = torch.equal(out, plain), torch.equal(x.grad, x_plain.grad)
    print("expected: the output and x.grad of the un-checkpointed run")
    print(f"actual:   output {'equal' if same_output else 'differs'}, x.grad "
          + ("equal" if same_gradient else f"differs (max |difference| {(x.grad - x_plain.grad).abs().max():.4f})"))
    return 0 if same_output and same_gradient else 1


if __name__ == "__main__":
    sys.exit(main())
