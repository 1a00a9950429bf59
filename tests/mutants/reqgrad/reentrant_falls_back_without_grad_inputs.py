"""Reentrant, but "helpfully" switches to the non-reentrant variant when no top-level input requires
grad (after the usual warning): parameters inside the region get gradients after all, and so do
tensors nested in the arguments."""

import warnings

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["reqgrad.reentrant-no-gradients", "nested.reentrant-not-considered"]
BREAKS = "reentrant: with no input requiring grad, the region's parameters still get gradients"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant and not any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", UserWarning)
        use_reentrant = False
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
