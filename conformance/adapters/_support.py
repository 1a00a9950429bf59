"""What the adapters share: wrapping a function in a module, lazy imports, and naming what an API lacks.

An adapter maps the contract's call, ``checkpoint(function, *args, use_reentrant=..., preserve_rng_state=...,
**kwargs)``, onto a third-party API and passes everything else through unchanged, so that the third
party's own behaviour (including its errors) is what the suite sees. Where the API has no equivalent for
a keyword or a variant, the adapter raises :class:`Unsupported` naming the implementation, instead of
silently dropping it.
"""

from __future__ import annotations

import importlib
import warnings
from importlib import metadata

import torch.nn as nn

from conformance.data.capabilities import Unsupported  # the adapters raise it (they import it from here)
from conformance.data.vocabulary import OWN_KEYWORDS
from reference_impl import sequential as reference_sequential

# Keywords checkpoint consumes itself (the rest of **kwargs goes to the function), but for
# preserve_rng_state, which every adapter maps explicitly.
TORCH_CHECKPOINT_KEYWORDS = tuple(k for k in OWN_KEYWORDS if k != "preserve_rng_state")

# What torch's own wrappers inherit from torch.utils.checkpoint. Not checkpoint_sequential (they have
# none; sequential_over builds one from wrapped chunks) nor the use_reentrant warning (they always
# choose the variant themselves).
TORCH_WRAPPER_FEATURES = [
    "preserve_rng_state", "kwargs", "context_fn", "determinism_check", "debug", "early_stop",
    "selective_checkpointing", "graph_exec_group", "distributed",
]


def distribution_version(distribution: str) -> str:
    """``"name==version"`` of an installed distribution, read without importing it."""
    try:
        return f"{distribution}=={metadata.version(distribution)}"
    except metadata.PackageNotFoundError:
        return f"{distribution} (not installed)"


def require(module: str, distribution: str):
    """Import a third-party module on first use; a missing package says how to install it.

    Warnings raised while importing (Megatron warns that Transformer Engine and Apex are absent) are
    about the environment, not the checkpoint contract: they are silenced so that they cannot land
    in the first test that happens to trigger the import.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{module} cannot be imported ({exc}); install {distribution} in this environment "
            f"(see docs/THIRD_PARTY.md and requirements/)"
        ) from exc


class FunctionModule(nn.Module):
    """An ``nn.Module`` whose forward runs ``function``: lets module-wrapper APIs checkpoint any callable.

    A fresh one is made per call, so wrappers that patch or hook the module never touch the caller's
    objects. A module (or a bound method of one) is registered as a child, so that APIs which inspect
    the wrapped module's parameters (FairScale decides ``requires_grad`` of the output from them) see
    the parameters the function uses.
    """

    def __init__(self, function):
        super().__init__()
        self.function = function  # registered as a child when it is an nn.Module
        owner = getattr(function, "__self__", None)
        if isinstance(owner, nn.Module) and not isinstance(function, nn.Module):
            self.owner = owner

    def forward(self, *args, **kwargs):
        return self.function(*args, **kwargs)


def reject_keywords(implementation: str, kwargs: dict, names=TORCH_CHECKPOINT_KEYWORDS) -> None:
    """Unsupported for checkpoint keywords the implementation's API does not have."""
    present = [name for name in names if name in kwargs]
    if present:
        raise Unsupported(f"{implementation} has no {', '.join(present)} keyword (its API cannot express it)")


def require_rng_preserved(implementation: str, preserve_rng_state, what_it_does: str) -> None:
    """For APIs that always stash the RNG state: True is their behaviour, False cannot be expressed."""
    if preserve_rng_state is not True:
        raise Unsupported(f"{implementation} has no preserve_rng_state option: {what_it_does}")


def check_variant(implementation: str, use_reentrant, supported: str, why: str) -> None:
    """Unsupported for the variant an implementation does not have (None means its default)."""
    asked = None if use_reentrant is None else ("reentrant" if use_reentrant else "non_reentrant")
    if asked not in (None, supported):
        raise Unsupported(f"{implementation} has no use_reentrant={bool(use_reentrant)} variant: {why}")


def sequential_over(checkpoint):
    """A ``checkpoint_sequential`` built from an implementation's own ``checkpoint``, for APIs without one.

    The split is the reference implementation's (the documented one: ``segments`` chunks, all but the
    last through ``checkpoint``, the last run plainly; a single input). This is how users of these APIs
    checkpoint a sequence (one wrapped region per chunk). Adapters do not claim the
    ``checkpoint_sequential`` feature: the segment arithmetic is the reference's, but every recompute,
    gradient and RNG stash in it is the implementation's.
    """

    def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
        preserve = kwargs.pop("preserve_rng_state", True)
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return reference_sequential.checkpoint_sequential(checkpoint, functions, segments, input, use_reentrant, preserve)

    return checkpoint_sequential
