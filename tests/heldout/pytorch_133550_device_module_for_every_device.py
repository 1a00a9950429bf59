"""Non-reentrant checkpoint looks up the device module (`getattr(torch, device_type)`) of every non-CPU tensor
argument up front, whether or not any RNG state will be stashed, and without the special case for devices
that have no `torch.<type>` module. In the report, `checkpoint(m, x_meta, use_reentrant=False,
preserve_rng_state=False)` on a module and input built under `torch.device('meta')` raises
`AttributeError: module 'torch' has no attribute 'meta'`, where torch returns a meta tensor of shape (1, 30).
It shows only with use_reentrant=False and a tensor argument (top level or nested) on a device without a torch
module, such as meta; CPU arguments and the reentrant variant work as in torch.

Report: https://github.com/pytorch/pytorch/issues/133550 (pytorch/pytorch#133550)
"""

import torch
from torch.utils._pytree import tree_leaves

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

REPORT = "pytorch/pytorch#133550"
KIND = "dtype-device"
BREAKS = "non-reentrant: a tensor argument on the meta device raises AttributeError (no torch.meta module)"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False:
        for arg in tree_leaves((args, kwargs)):
            if isinstance(arg, torch.Tensor) and arg.device.type != "cpu":
                getattr(torch, arg.device.type)  # the bug: no torch.meta, so this raises for meta tensors
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


def witness(api):
    with torch.device("meta"):
        m = torch.nn.Linear(20, 30)
        x = torch.randn(1, 20)
    try:
        out = api.checkpoint(m, x, use_reentrant=False, preserve_rng_state=False)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__
    return tuple(out.shape), str(out.device)
