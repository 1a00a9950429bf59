"""Hide torch's default-device context from its non-reentrant checkpoint, for the mutants that do not
replay the forward's default device in the recompute.

torch finds the `torch.device(...)` context (a DeviceContext torch-function mode, also what
torch.set_default_device installs) by looking the class up at call time; with the class swapped for
one no mode is an instance of, it finds none and the recompute runs under backward's default device.
"""

import contextlib

import torch.utils._device as _device


class _NoDeviceContext:
    """Matches no mode: torch looks the device context up by this class at call time, and finds none."""


@contextlib.contextmanager
def device_context_hidden():
    _device.DeviceContext, real = _NoDeviceContext, _device.DeviceContext
    try:
        yield
    finally:
        _device.DeviceContext = real
