"""thunder.jit: an in-place op on an intermediate inside torch.utils.checkpoint is applied twice (wrong forward value)

Inside a function compiled with thunder.jit, torch.utils.checkpoint(fn, x, use_reentrant=False) is looked up by
Thunder's interpreter (thunder/core/jit_ext.py, _general_jit_torch_checkpoint_lookaside), which traces fn inline and
tags what it computes for recomputation. When fn updates one of its own intermediates in place, e.g.

    h = x * 3.0
    h.add_(x)
    return h           # 4 * x

the jitted call returns 5 * x: the in-place add is applied twice, silently. The same function jitted without
checkpoint returns 4 * x, as eager torch does, with or without checkpoint.

Condition: x requires grad (Thunder then traces the region for its backward, and tags it for recomputation); with
x not requiring grad the jitted call is right. Not add_ only: mul_ and sin_ are applied twice too (3 * x ** 3 for
3 * x ** 2, sin(sin(3 * x)) for sin(3 * x)). The script runs each of add_, mul_ and sin_ with x requiring grad and not.

Documentation: torch's checkpoint page (https://docs.pytorch.org/docs/stable/checkpoint.html) says "Activation
checkpointing is a technique that trades compute for memory. Instead of keeping tensors needed for backward alive
until they are used in gradient computation during backward, forward computation in checkpointed regions omits
saving tensors for backward and recomputes them during the backward pass." The forward's value does not change;
Thunder documents that it supports torch.utils.checkpoint in jitted functions.

Steps: pip install lightning-thunder==0.2.6 (torch held), then
       python thunder_in_place_op_applied_twice.py                                (thunder.jit: exits 1)
       python thunder_in_place_op_applied_twice.py --impl torch.utils.checkpoint  (eager torch: exits 0)
  thunder 0.2.6 lists five named-tensor methods (Tensor.align_as, align_to, has_names, refine_names, rename) among
  its fallback operators, which torch 2.13 no longer has: on such a torch the script gives Tensor stubs of them for
  the import only and removes them again (they are never called).
Expected: eager torch's value in each case, as thunder.jit gives without checkpoint.
Actual (lightning-thunder 0.2.6, torch 2.13.0, CPU, 2026-11-28): with x requiring grad, add_ gives 5 * x, mul_
  gives 3 * x ** 3, sin_ gives sin(sin(3 * x)); with x not requiring grad, each is right.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import platform
import sys
import warnings

import torch
from torch.utils.checkpoint import checkpoint

PACKAGE = "thunder"
NAMED_TENSOR_METHODS = ("align_as", "align_to", "has_names", "refine_names", "rename")


def import_thunder():
    missing = [name for name in NAMED_TENSOR_METHODS if not hasattr(torch.Tensor, name)]
    for name in missing:  # thunder checks each fallback's __name__ against the attribute it was found under
        def stub(self, *args, **kwargs):
            raise RuntimeError("a stub given for importing thunder only")
        stub.__name__, stub.__qualname__ = name, f"Tensor.{name}"
        setattr(torch.Tensor, name, stub)
    try:
        return importlib.import_module(PACKAGE)
    finally:
        for name in missing:
            delattr(torch.Tensor, name)


# The in-place ops the region applies to its intermediate h = x * 3.0, and what eager torch returns.
IN_PLACE = {"add_": lambda h, x: h.add_(x), "mul_": lambda h, x: h.mul_(x), "sin_": lambda h, x: h.sin_()}


def region_of(op):
    def region(x):
        h = x * 3.0
        IN_PLACE[op](h, x)
        return h
    return region


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default=PACKAGE, help=f"{PACKAGE} (default: thunder.jit) or torch.utils.checkpoint (eager)")
    name = parser.parse_args().impl
    print(f"torch {torch.__version__}, Python {platform.python_version()}, checkpoint: {name}")
    jit = lambda f: f  # noqa: E731  (eager torch)
    if name == PACKAGE:
        thunder = import_thunder()
        print(f"lightning-thunder {importlib.metadata.version('lightning-thunder')}")
        warnings.simplefilter("ignore")  # thunder's own deprecation warnings while it traces
        jit = thunder.jit
    wrong = []
    for op in IN_PLACE:
        for requires_grad in (True, False):  # where the condition holds, and where it does not
            x = torch.arange(1.0, 5.0, dtype=torch.float64, requires_grad=requires_grad)
            region = region_of(op)
            expected, plain = region(x), jit(region)(x)
            actual = jit(lambda t: checkpoint(region, t, use_reentrant=False))(x)
            ok = torch.allclose(actual, expected)
            shown = [[round(v, 4) for v in t.tolist()] for t in (expected, plain, actual)]
            print(f"h.{op} on x * 3, x.requires_grad={requires_grad}: expected {shown[0]}, jitted without checkpoint "
                  f"{shown[1]}, with checkpoint {shown[2]}" + ("" if ok else "  <- wrong"))
            wrong += [] if ok else [(op, requires_grad)]
    print(f"wrong: {wrong or 'none'}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
