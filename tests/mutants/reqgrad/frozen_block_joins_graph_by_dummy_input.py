"""Reentrant: when no input requires grad it warns as usual, then passes a dummy tensor that requires
grad so the region always joins the graph, as FairScale's checkpoint did before
facebookresearch/fairscale#787 ("as long as we set the requires_grad properly, Autograd will not
trigger backward pass on the modules that don't have outputs with gradients"). Under a frozen block the
output then requires grad, and backward from a trainable head re-runs the block, finds no recomputed
output that requires grad and raises. (Where the region has trainable parameters the dummy gives them
gradients, which is what it was for: reqgrad.reentrant-no-gradients sees that.)"""

import warnings

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["reqgrad.frozen-block-head-trains"]
BREAKS = "reentrant: a frozen block joins the graph through a dummy input, so the head's backward fails"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if not use_reentrant or any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
        return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", UserWarning)
    dummy = torch.ones((), requires_grad=True)
    return _checkpoint(lambda _dummy, *inputs: function(*inputs), dummy, *args, use_reentrant=True, **kwargs)
