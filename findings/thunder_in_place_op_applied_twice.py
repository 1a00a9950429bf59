"""thunder.jit: an in-place op on an intermediate inside torch.utils.checkpoint is applied twice (wrong forward value)

Inside a function compiled with thunder.jit, torch.utils.checkpoint(fn, x, use_reentrant=False) is looked up by
Thunder's interpreter (thunder/core/jit_ext.py, _general_jit_torch_checkpoint_lookaside), which traces fn inline and
tags what it computes for recomputation. When fn updates one of its own intermediates in place, e.g.

    h = x * 3.0
    h.add_(x)
    return h           # 4 * x

the jitted call returns 5 * x: the in-place add is applied twice, silently. The same function jitted without
checkpoint returns 4 * x, as eager torch does, with or without checkpoint.

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
Expected: 4 * x (the un-checkpointed value), as thunder.jit gives without checkpoint.
Actual (lightning-thunder 0.2.6, torch 2.13.0, CPU): 5 * x.
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


def region(x):
    h = x * 3.0
    h.add_(x)
    return h


def checkpointed(x):
    return checkpoint(region, x, use_reentrant=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default=PACKAGE, help=f"{PACKAGE} (default: thunder.jit) or torch.utils.checkpoint (eager)")
    name = parser.parse_args().impl
    print(f"torch {torch.__version__}, Python {platform.python_version()}, checkpoint: {name}")
    x = torch.arange(1.0, 5.0, dtype=torch.float64, requires_grad=True)
    expected = region(x)
    run = checkpointed
    if name == PACKAGE:
        thunder = import_thunder()
        print(f"lightning-thunder {importlib.metadata.version('lightning-thunder')}")
        warnings.simplefilter("ignore")  # thunder's own deprecation warnings while it traces
        print(f"thunder.jit without checkpoint: {thunder.jit(region)(x).tolist()}")
        run = thunder.jit(checkpointed)
    actual = run(x)
    print(f"expected: {expected.tolist()} (4 * x)")
    if torch.allclose(actual, expected):
        print("actual:   as expected")
        return 0
    print(f"actual:   {actual.tolist()}" + (" (5 * x: the in-place add applied twice)" if torch.allclose(actual, 5 * x) else ""))
    return 1


if __name__ == "__main__":
    sys.exit(main())
