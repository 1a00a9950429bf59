"""non_reentrant_checkpoint refuses torch.autograd.grad by an explicit check: a limitation against the contract it follows

deepspeed.checkpointing.non_reentrant_checkpoint is DeepSpeed's saved-tensor-hooks checkpoint, "union of
`torch.utils.checkpoint._checkpoint_without_reentrant` and `CheckpointFunction`" (its docstring). It refuses
torch.autograd.grad on purpose: its unpack hook keeps the reentrant CheckpointFunction's explicit check,
`if not torch.autograd._is_checkpoint_valid(): raise RuntimeError("Checkpointing is not compatible with .grad(),
please use .backward() if possible")` (deepspeed/runtime/activation_checkpointing/checkpointing.py, in
non_reentrant_checkpoint's unpack hook; the same check as CheckpointFunction.backward's). So a gradient taken with
torch.autograd.grad (or backward(inputs=...)) through the region raises: a limitation its message states, of the
very call the non-reentrant design exists to support. Filed as a limitation against the contract it follows, not as
an accident: either the check goes (nothing of the non-reentrant design needs it), or the limitation is documented
beside non_reentrant_checkpoint.

Documentation: torch's checkpoint page (https://docs.pytorch.org/docs/stable/checkpoint.html), which
non_reentrant_checkpoint follows: "If ``use_reentrant=False`` is specified, ``checkpoint`` will use an
implementation that does not require re-entrant autograd. This allows ``checkpoint`` to support additional
functionality, such as working as expected with ``torch.autograd.grad``".

Steps: DS_BUILD_OPS=0 pip install deepspeed==0.19.8 (torch held), then
       python deepspeed_non_reentrant_autograd_grad.py                                (DeepSpeed: exits 1)
       python deepspeed_non_reentrant_autograd_grad.py --impl torch.utils.checkpoint  (torch, use_reentrant=False: exits 0)
Expected: torch.autograd.grad(out.sum(), x) returns cos(x) * exp(sin(x)), as with torch's non-reentrant checkpoint.
Actual (this script, deepspeed 0.19.8, torch 2.13.0+cpu, Python 3.11, 2026-11-28): RuntimeError: Checkpointing is not compatible with .grad(), please use .backward() if possible.
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
        return module.non_reentrant_checkpoint
    return functools.partial(module.checkpoint, use_reentrant=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default=PACKAGE, help=f"{PACKAGE} (default) or torch.utils.checkpoint")
    name = parser.parse_args().impl
    checkpoint = checkpoint_from(name)
    print(f"torch {torch.__version__}, Python {platform.python_version()}, checkpoint: {name}")

    x = torch.randn(5, generator=torch.Generator().manual_seed(0), requires_grad=True)
    out = checkpoint(lambda t: t.sin().exp(), x)
    print("expected: torch.autograd.grad(out.sum(), x) == cos(x) * exp(sin(x))")
    try:
        (gradient,) = torch.autograd.grad(out.sum(), x)
    except RuntimeError as error:  # the finding
        print(f"actual:   RuntimeError: {error}")
        return 1
    right = torch.allclose(gradient, (x.cos() * x.sin().exp()).detach())
    print(f"actual:   the gradient {'as expected' if right else 'differs'}")
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
