"""The forward's environment, captured when the forward runs and replayed around the recompute.

A recompute must compute what the forward computed, so it must see what the forward saw:
- the same random numbers (``preserve_rng_state=True``): the CPU generator and the generator of
  every device that holds a tensor argument are stashed before the forward and set again for the
  recompute. The caller's own generator states are restored afterwards, so that checkpointing
  does not shift the random stream the rest of the program sees;
- the same autocast settings, for the CPU and for the arguments' device type (autocast enabled
  only around ``.backward()`` must not leak into the recompute, and vice versa);
- the same default device (``with torch.device(...)``), for tensors created without a device.
"""

from __future__ import annotations

import contextlib
import functools
import warnings

import torch


def tensors_in(value, found=None) -> list[torch.Tensor]:
    """Every tensor in value, looking inside (nested) lists, tuples and dicts, in order."""
    found = [] if found is None else found
    if isinstance(value, torch.Tensor):
        found.append(value)
    elif isinstance(value, (list, tuple, dict)):
        for item in value.values() if isinstance(value, dict) else value:
            tensors_in(item, found)
    return found


def infer_device_type(tensors) -> str:
    """The one non-CPU device type whose state is captured: CUDA if present, else the first seen.

    With no non-CPU tensor it is the machine's accelerator, or "cpu" when there is none: no device
    generator is stashed then (no argument lives on a device), but its autocast state is captured.
    """
    types = list(dict.fromkeys(t.device.type for t in tensors if t.device.type != "cpu"))
    if not types:
        accelerator = torch.accelerator.current_accelerator()
        return accelerator.type if accelerator is not None else "cpu"
    if len(types) > 1:
        chosen = "cuda" if "cuda" in types else types[0]
        warnings.warn(
            "Tensor arguments, excluding CPU tensors, are detected on at least two types of devices. "
            "Device state will only be saved for devices of a single device type; random operations "
            f"on the others will not be replayed.\nDevice types: {sorted(types)} first device type: {chosen}",
            stacklevel=5,  # the caller of checkpoint
        )
        return chosen
    return types[0]


def _rng_module(device_type: str):
    """torch.cuda, torch.xpu, ...: the module with the device's generators, if it is in use."""
    module = getattr(torch, device_type, None) if device_type not in ("cpu", "meta") else None
    if module is None or not hasattr(module, "get_rng_state"):
        return None
    # An uninitialized device has no generator state to stash, and reading it would initialize it.
    # Modules without lazy initialization (MPS) have no is_initialized: there, available is enough.
    in_use = getattr(module, "is_initialized", None) or getattr(module, "is_available", None)
    return module if in_use is not None and in_use() else None


class RngStash:
    """The CPU generator and the generators of the arguments' devices, as they were at forward."""

    def __init__(self, tensors, device_type: str):
        self.device_type = device_type
        module = self.module = _rng_module(device_type)
        devices = sorted({t.get_device() for t in tensors if t.device.type == device_type}) if module else []
        # (get_state, set_state) of each generator to replay: the CPU's, then one per device.
        self.generators = [(torch.get_rng_state, torch.set_rng_state)] + [
            (functools.partial(module.get_rng_state, device), functools.partial(module.set_rng_state, device=device))
            for device in devices
        ]
        self.states = [get_state() for get_state, _ in self.generators]

    def device_initialized_since(self) -> bool:
        """Whether the device came into use during the forward: its random draws cannot be replayed."""
        return self.module is None and _rng_module(self.device_type) is not None

    @contextlib.contextmanager
    def replayed(self):
        """Run the block from the stashed generator states, then give the caller back its own."""
        caller_states = [get_state() for get_state, _ in self.generators]
        for (_, set_state), state in zip(self.generators, self.states):
            set_state(state)
        try:
            yield
        finally:
            for (_, set_state), state in zip(self.generators, caller_states):
                set_state(state)


def _autocast_state(kinds):
    return [(kind, torch.is_autocast_enabled(kind), torch.get_autocast_dtype(kind)) for kind in kinds], \
        torch.is_autocast_cache_enabled()


def _default_device():
    # The device context is a torch-function mode: with none active, skip the slower lookup.
    return torch.get_default_device() if torch._C._is_torch_function_mode_enabled() else _CPU


_CPU = torch.device("cpu")


class ForwardState:
    """Everything about the forward's environment that its recompute replays."""

    def __init__(self, args, kwargs, preserve_rng_state: bool):
        tensors = tensors_in((args, kwargs))
        device_type = infer_device_type(tensors)
        self.rng = RngStash(tensors, device_type) if preserve_rng_state else None
        self.autocast_kinds = [kind for kind in dict.fromkeys((device_type, "cpu")) if torch.amp.is_autocast_available(kind)]
        self.autocast = _autocast_state(self.autocast_kinds)
        self.default_device = _default_device()

    @contextlib.contextmanager
    def replayed(self):
        with contextlib.ExitStack() as stack:
            if self.rng is not None:
                stack.enter_context(self.rng.replayed())
            # Entering autocast or a device context costs time on every recompute (a device context
            # even on every op), so each is entered only where the current state differs.
            if _autocast_state(self.autocast_kinds) != self.autocast:
                settings, cache_enabled = self.autocast
                for kind, enabled, dtype in settings:
                    stack.enter_context(torch.autocast(kind, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled))
            if _default_device() != self.default_device:
                stack.enter_context(self.default_device)
            yield
