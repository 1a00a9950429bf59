"""Unsloth's checkpointing as its users meet it: one of its patches replaces ``torch.utils.checkpoint.checkpoint``.

unsloth-zoo 2026.10.9 (``unsloth_zoo/gradient_checkpointing.py``) has its own reentrant checkpointers and
installs them by assigning ``torch.utils.checkpoint.checkpoint`` (and, for the smart patch,
``torch.utils.checkpoint.CheckpointFunction``); models and ``transformers`` then call torch's name and run
Unsloth's code. The patch is process-global and there is no way back but its own unpatch, so each row runs in
its own process (``python -m conformance run`` runs each implementation separately).

On a machine without CUDA its import and initialisation need three of its own environment variables, set here
unless the caller set them (on a CUDA machine nothing is set and Unsloth probes the GPU as it does for users):
``UNSLOTH_ZOO_DISABLE_GPU_INIT=1`` (skip the GPU probe at import, which otherwise requires the ``unsloth`` package
and a GPU; the device type reads "cpu"), ``UNSLOTH_DISABLE_PINNED_MEMORY=1`` (its host buffers are allocated with
``pin_memory=True``, which a CPU-only torch refuses) and ``UNSLOTH_DISABLE_DOUBLE_BUFFER=1`` (its double buffering
creates device events, "Double buffering unsupported on cpu").
"""

from __future__ import annotations

import contextlib
import io
import os

import torch
import torch.utils.checkpoint

from conformance.adapters._support import require

DISTRIBUTION = "unsloth-zoo==2026.10.9 (requirements/unsloth.txt)"
CPU_ENVIRONMENT = {
    "UNSLOTH_ZOO_DISABLE_GPU_INIT": "1",
    "UNSLOTH_DISABLE_PINNED_MEMORY": "1",
    "UNSLOTH_DISABLE_DOUBLE_BUFFER": "1",
}
# The smart patch sizes its offload buffers by a dtype it derives from the GPU's bfloat16 support; on CPU
# there is no GPU to ask (its dtype=None path fails), so it is given the one it picks on current GPUs.
BUFFER_DTYPE = torch.bfloat16


def gradient_checkpointing():
    """``unsloth_zoo.gradient_checkpointing``, imported with its CPU environment where CUDA is absent."""
    if not torch.cuda.is_available():
        for name, value in CPU_ENVIRONMENT.items():
            os.environ.setdefault(name, value)
    return require("unsloth_zoo.gradient_checkpointing", DISTRIBUTION)


def patched(patch_name: str, shim_name: str):
    """``torch.utils.checkpoint`` after Unsloth's ``patch_name`` installed ``shim_name`` (once per process).

    The patch prints a banner ("Unsloth: Patched gradient checkpointing ..."), swallowed so that it cannot land
    in a test's captured output."""
    module = gradient_checkpointing()
    if torch.utils.checkpoint.checkpoint.__name__ != shim_name:
        patch = getattr(module, patch_name)
        with contextlib.redirect_stdout(io.StringIO()):
            patch(BUFFER_DTYPE) if patch_name == "patch_unsloth_smart_gradient_checkpointing" else patch()
        assert torch.utils.checkpoint.checkpoint.__name__ == shim_name, f"{patch_name} did not install {shim_name}"
    return torch.utils.checkpoint


def entry_points(patch_name: str, shim_name: str):
    """The contract's ``checkpoint`` and ``checkpoint_sequential``, called unchanged on torch's names after the patch."""

    def checkpoint(function, *args, **kwargs):
        return patched(patch_name, shim_name).checkpoint(function, *args, **kwargs)

    def checkpoint_sequential(functions, segments, input, **kwargs):
        return patched(patch_name, shim_name).checkpoint_sequential(functions, segments, input, **kwargs)

    return checkpoint, checkpoint_sequential
