"""Non-reentrant: the recompute runs under backward's default device, not the forward's torch.device(...)."""

import contextlib

import torch.utils._device as _device
import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403

TARGET_CLAUSES = ["contextfn.default-device-replayed"]
BREAKS = "the torch.device(...) context active in the forward is not re-applied to the recompute"


class _NoDeviceContext:
    """Matches no mode: torch looks the device context up by this class at call time, and finds none."""


@contextlib.contextmanager
def _device_context_hidden():
    _device.DeviceContext, real = _NoDeviceContext, _device.DeviceContext
    try:
        yield
    finally:
        _device.DeviceContext = real


def checkpoint(function, *args, **kwargs):
    with _device_context_hidden():
        return _torch.checkpoint(function, *args, **kwargs)
