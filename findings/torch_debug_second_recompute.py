"""checkpoint(..., use_reentrant=False, debug=True): a region's second recompute raises AttributeError

With debug=True, torch's non-reentrant checkpoint calls its debug context_fn once per forward, and the
recompute's context manager it returns is a one-shot @contextmanager: the first recompute uses it up, so a
region's second recompute raises AttributeError: '_GeneratorContextManager' object has no attribute 'args'.
A second backward with retain_graph=True, a double backward, or autograd inside the region followed by the
backward all need a second recompute. Without debug=True the same program works.

Documentation (https://docs.pytorch.org/docs/stable/checkpoint.html, torch.utils.checkpoint.checkpoint):
  "debug(bool, optional): If ``True``, error messages will also include a trace of the operators ran during
  the original forward computation as well as the recomputation."
  (debug only adds a trace to error messages; the program itself is valid: it runs without debug.)

Steps: python torch_debug_second_recompute.py                       (torch.utils.checkpoint: exits 1)
       python torch_debug_second_recompute.py --impl reference_impl (checkpoint-conformance's reference: exits 0)
Expected: the second backward(retain_graph=True) recomputes the region again and accumulates the same gradient,
  as it does with debug=False.
Actual (torch 2.13.0): the second backward raises AttributeError: '_GeneratorContextManager' object has no
  attribute 'args'.
"""

from __future__ import annotations

import argparse
import importlib
import platform
import sys

import torch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="torch.utils.checkpoint",
                        help="a module with torch.utils.checkpoint's API (default: torch.utils.checkpoint)")
    ckpt = importlib.import_module(parser.parse_args().impl)
    print(f"torch {torch.__version__}, Python {platform.python_version()}, checkpoint from {ckpt.__name__}")

    x = torch.randn(3, generator=torch.Generator().manual_seed(0), requires_grad=True)
    out = ckpt.checkpoint(torch.tanh, x, use_reentrant=False, debug=True)
    out.sum().backward(retain_graph=True)
    print("expected: the second backward accumulates tanh's gradient again (x.grad = 2 * (1 - tanh(x)**2))")
    try:
        out.sum().backward()
    except Exception as error:  # the finding: the second recompute fails
        print(f"actual:   {type(error).__name__}: {error}")
        return 1
    right = torch.allclose(x.grad, 2 * (1 - x.detach().tanh() ** 2))
    print(f"actual:   x.grad {'as expected' if right else f'differs: {x.grad.tolist()}'}")
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
