"""The non-reentrant recompute re-enters the forward's own, live DeviceContext object (the mode that
`torch.set_default_device(...)` or `with torch.device(...)` put on the torch-function mode stack) while
that very object is already active for the recompute. Entering a DeviceContext links it to the one it finds
on the stack, here itself, as its previous mode, and its exit pushes that "previous" mode back: a zombie
DeviceContext stays on the mode stack. Gradients are right. It shows when the forward ran under a default
device and the caller later leaves it: after backward, `torch.set_default_device(None)` no longer resets
the default device (torch.empty(2) is still on the forward's device), and a saved tensor unpacked outside
backward (`out.grad_fn._saved_self`) leaves the forward's device active after the `with torch.device(...)`
block has ended. Forwards without a device context, and the reentrant variant, are as in torch.

Report: https://github.com/pytorch/pytorch/pull/180423 (pytorch/pytorch#180423)
"""

import torch
from torch.overrides import _get_current_function_mode_stack, _pop_mode
from torch.utils._device import DeviceContext

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

REPORT = "pytorch/pytorch#180423"
KIND = "dtype-device"
BREAKS = ("non-reentrant, forward under a default device: the recompute leaves that DeviceContext on the mode "
          "stack, so the default device cannot be unset after backward")


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is not False:
        return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    forward_device = next((m for m in reversed(_get_current_function_mode_stack())
                           if isinstance(m, DeviceContext)), None)

    def around(call, fn, *a, **k):
        if call == 0 or forward_device is None:
            return fn(*a, **k)
        with forward_device:  # the bug: the live object, already entered by torch for this recompute
            return fn(*a, **k)

    return _checkpoint(on_calls(function, around), *args, use_reentrant=False, **kwargs)


def witness(api):
    torch.manual_seed(0)
    w = torch.randn(3, 3, device="cpu", requires_grad=True)
    x = torch.randn(2, 3, device="cpu", requires_grad=True)
    seen, depth = [], len(_get_current_function_mode_stack())
    try:
        torch.set_default_device("meta")  # forward and backward under a global default device, then unset it
        out = api.checkpoint(lambda t: (t @ w).sin(), x, use_reentrant=False)
        out.sum().backward()
        torch.set_default_device(None)
        seen.append(str(torch.empty(2).device))
        with torch.device("meta"):  # a saved tensor read outside backward, after the block
            out = api.checkpoint(lambda t: (t @ w).sin(), x, use_reentrant=False)
        out.grad_fn._saved_self
        seen.append(str(torch.empty(2).device))
    finally:  # leave no device context behind for the rest of the process
        torch.set_default_device(None)
        while len(_get_current_function_mode_stack()) > depth:
            _pop_mode()
    return tuple(seen), round(w.grad.sum().item(), 4)
