"""Lightning Thunder 0.2.6: torch.utils.checkpoint inside a ``thunder.jit``-compiled region.

Thunder does not run torch's checkpoint: its interpreter looks the call up (``thunder/core/jit_ext.py``,
``_general_jit_torch_checkpoint_lookaside``), traces the function inline and tags every intermediate it
produces ``RECOMPUTE_IN_BACKWARD``, so that Thunder's own autodiff and rematerialisation recompute them in
the backward trace; only the region's inputs are saved. ``use_reentrant=True`` is refused, ``context_fn``,
``debug``, ``determinism_check`` and ``preserve_rng_state`` are accepted and ignored (with a warning), and
the lookaside has no ``**kwargs``, so neither keyword arguments for the function nor ``early_stop`` reach it.

Each top-level call jits a fresh region (a new ``thunder.jit`` object, so that no test reuses another's
cached trace: Thunder's cache is keyed by the region's inputs, not by the function a closure holds) that
calls torch's ``checkpoint`` / ``checkpoint_sequential`` with the caller's function, arguments and
keywords; everything reaches Thunder as users write it. A call made while Thunder is tracing (a checkpoint
nested in the checkpointed function) calls torch directly, for Thunder to look up as part of the outer trace.

Importing thunder 0.2.6 on torch 2.13 needs a shim: its table of torch operators to register as fallbacks
(``thunder/torch/default_torch_ops.py``) names the named-tensor methods ``Tensor.align_as``, ``align_to``,
``has_names``, ``refine_names`` and ``rename``, which torch 2.13 no longer has, so the import fails with
``AttributeError: type object 'Tensor' has no attribute 'align_as'``. ``_import_thunder`` gives ``Tensor``
those five names for the import only (stubs that raise if called), then removes them again: Thunder
registers fallbacks for methods that cannot be called anyway, and torch's surface is left as it was.
"""

from __future__ import annotations

import contextlib
import sys

import torch
import torch.utils.checkpoint as torch_checkpoint

from conformance.adapters._support import distribution_version, require

__version__ = distribution_version("lightning-thunder")
NAME = "thunder.jit + torch.utils.checkpoint"

CAPABILITIES = {
    "variants": ["non_reentrant"],
    # What the lookaside accepts and acts on; context_fn, debug and determinism_check are accepted and
    # ignored, kwargs and early_stop are not accepted. torch's checkpoint_sequential is traced like user code.
    "features": ["preserve_rng_state", "checkpoint_sequential"],
    "devices": ["cpu", "cuda"],
}
__conformance__ = {"name": NAME, "capabilities": CAPABILITIES}

# Named-tensor methods thunder 0.2.6 lists among its fallback operators; torch 2.13 has none of them.
_REMOVED_TENSOR_METHODS = ("align_as", "align_to", "has_names", "refine_names", "rename")


def _removed(name: str):
    def removed(self, *args, **kwargs):
        raise RuntimeError(f"Tensor.{name}: named tensors are not in torch {torch.__version__} "
                           "(a stub given for importing thunder only)")

    removed.__name__, removed.__qualname__ = name, f"Tensor.{name}"
    return removed


def _import_thunder():
    missing = [name for name in _REMOVED_TENSOR_METHODS if not hasattr(torch.Tensor, name)]
    for name in missing:
        setattr(torch.Tensor, name, _removed(name))
    try:
        return require("thunder", "lightning-thunder==0.2.6")
    finally:
        for name in missing:
            delattr(torch.Tensor, name)


# Importing thunder takes seconds (over a minute on a busy 2-core machine): where it is installed it is
# imported with the adapter, so that the harness's run process pays it once, before any test's clock
# starts (its attempts are forks of that process), instead of the first test of every attempt.
with contextlib.suppress(ImportError):
    _import_thunder()


def _thunder():
    # Already imported: a nested call runs inside Thunder's interpreter, which should not re-run the import.
    return sys.modules.get("thunder") or _import_thunder()


def checkpoint(function, *args, **kwargs):
    thunder = _thunder()
    if thunder.core.interpreter.is_jitting():  # looked aside to True while Thunder traces
        return torch_checkpoint.checkpoint(function, *args, **kwargs)
    return thunder.jit(lambda *tensors: torch_checkpoint.checkpoint(function, *tensors, **kwargs))(*args)


def checkpoint_sequential(functions, segments, input, **kwargs):
    thunder = _thunder()
    if thunder.core.interpreter.is_jitting():
        return torch_checkpoint.checkpoint_sequential(functions, segments, input, **kwargs)
    return thunder.jit(lambda input: torch_checkpoint.checkpoint_sequential(functions, segments, input, **kwargs))(input)
