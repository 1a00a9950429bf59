"""What the adapters share: wrapping a function in a module, lazy imports, and naming what an API lacks.

An adapter maps the contract's call, ``checkpoint(function, *args, use_reentrant=..., preserve_rng_state=...,
**kwargs)``, onto a third-party API and passes everything else through unchanged, so that the third
party's own behaviour (including its errors) is what the suite sees. Where the API has no equivalent for
a keyword, the adapter raises ``TypeError`` naming the implementation, as Python would for an unexpected
keyword, instead of silently dropping it.
"""

from __future__ import annotations

import importlib
from importlib import metadata

import torch.nn as nn

# Keywords torch.utils.checkpoint.checkpoint consumes itself (the rest of **kwargs goes to the function).
# preserve_rng_state is handled separately: every adapter maps it explicitly.
TORCH_CHECKPOINT_KEYWORDS = ("context_fn", "determinism_check", "debug", "early_stop")


def distribution_version(distribution: str) -> str:
    """``"name==version"`` of an installed distribution, read without importing it."""
    try:
        return f"{distribution}=={metadata.version(distribution)}"
    except metadata.PackageNotFoundError:
        return f"{distribution} (not installed)"


def require(module: str, distribution: str):
    """Import a third-party module on first use; a missing package says how to install it."""
    try:
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
    """TypeError for checkpoint keywords the implementation's API does not have."""
    present = [name for name in names if name in kwargs]
    if present:
        raise TypeError(f"{implementation} has no {', '.join(present)} keyword (its API cannot express it)")


def require_rng_preserved(implementation: str, preserve_rng_state, what_it_does: str) -> None:
    """For APIs that always stash the RNG state: True is their behaviour, False cannot be expressed."""
    if preserve_rng_state is not True:
        raise TypeError(f"{implementation} has no preserve_rng_state option: {what_it_does}")


def check_variant(implementation: str, use_reentrant, supported: str, why: str) -> None:
    """NotImplementedError for the variant an implementation does not have (None means its default)."""
    asked = None if use_reentrant is None else ("reentrant" if use_reentrant else "non_reentrant")
    if asked not in (None, supported):
        raise NotImplementedError(f"{implementation} has no use_reentrant={bool(use_reentrant)} variant: {why}")


def no_checkpoint_sequential(implementation: str):
    """A ``checkpoint_sequential`` for APIs that have none: says so when called."""

    def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
        raise NotImplementedError(
            f"{implementation} has no checkpoint_sequential; the adapter does not build one, so that the "
            "sequential clauses test the implementation and not the adapter"
        )

    return checkpoint_sequential
