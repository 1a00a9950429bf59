"""The autocast state that the recompute has to re-enter (device and CPU autocast: enabled, dtype, cache flag)
is kept in one module-level slot, and every checkpoint call overwrites it. It should be kept per call. This is the
shape of Megatron-LM#7010, where per-forward state lived on a shared holder and a recompute read another forward's
state. The bug shows when two or more regions are forwarded under different autocast states before their backward,
for example region A under `torch.autocast("cpu", dtype=torch.bfloat16)`, then region B outside autocast, then
backward. Every recompute runs under the state of the last call (B's float32). Under the non-reentrant variant,
A's backward then raises CheckpointError (saved bfloat16, recomputed float32). Under the reentrant variant, A's
gradients come from a float32 recompute and differ from torch's bfloat16 ones. A single region, or regions that
share one autocast state, behave as torch does.

Report: https://github.com/NVIDIA/Megatron-LM/pull/7010 (NVIDIA/Megatron-LM#7010)
"""

import contextlib

import torch
import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

REPORT = "NVIDIA/Megatron-LM#7010"
KIND = "autocast"
BREAKS = "regions forwarded under different autocast states are all recomputed under the last call's state"

_last_autocast = {}  # BUG: one slot for every region; it should travel with each call


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    device_type = _torch._infer_device_type(*args)
    device_kwargs, cpu_kwargs = _torch._get_autocast_kwargs(device_type)
    _last_autocast.update(device_type=device_type, device=device_kwargs, cpu=cpu_kwargs)

    def around(call, function, *args, **kwargs):
        if call == 0:
            return function(*args, **kwargs)
        # The recompute re-enters "the" stashed state: whichever call wrote the slot last.
        state = _last_autocast
        device_ctx = (torch.amp.autocast(state["device_type"], **state["device"])
                      if state["device"] is not None else contextlib.nullcontext())
        with device_ctx, torch.amp.autocast("cpu", **state["cpu"]):
            return function(*args, **kwargs)

    return _checkpoint(on_calls(function, around), *args, use_reentrant=use_reentrant, **kwargs)


def witness(api):
    results = []
    for reentrant in (True, False):
        torch.manual_seed(0)
        x = torch.randn(4, 4, requires_grad=True)
        w = torch.randn(4, 4, requires_grad=True)

        def region(t):
            return (t @ w).tanh()

        try:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                a = api.checkpoint(region, x, use_reentrant=reentrant)  # region A: bfloat16
            b = api.checkpoint(region, x, use_reentrant=reentrant)  # region B: float32
            (a.float().sum() + b.sum()).backward()
            results.append(tuple(round(v, 3) for v in w.grad.flatten().tolist()))
        except Exception as e:  # noqa: BLE001
            results.append(type(e).__name__)
    return tuple(results)
