"""Non-reentrant: when no input requires grad, the region is run without a graph unless the function's
module (the function itself, or a bound method's owner, or a partial's function's owner) holds a
parameter that requires grad. transformers checkpoints partial(forward, block, **kwargs), whose function
is unbound: the block behind it goes unseen, and LoRA adapters over frozen embeddings silently get no
gradient (huggingface/peft#1142, huggingface/transformers#26221).

Flagged by the models area only (test_models.py, the LoRA tests); the small-function tests checkpoint
modules and plain functions, which keep their graph."""

import functools

import torch
from torch import nn

from tests.mutants._support.call_wrappers import OWN_KEYWORDS
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["reqgrad.non-reentrant-gradients"]
BREAKS = "a partial of an unbound forward with no input requiring grad runs without a graph: adapters get no gradient"


def _seems_frozen(function):
    if isinstance(function, functools.partial):
        owner = getattr(function.func, "__self__", None)  # the block bound as the partial's argument is missed
        return not (isinstance(owner, nn.Module) and any(p.requires_grad for p in owner.parameters()))
    return False  # modules and plain functions keep their graph


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    inputs_need_grad = any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
    if use_reentrant is False and not inputs_need_grad and _seems_frozen(function):
        with torch.no_grad():
            return function(*args, **{k: v for k, v in kwargs.items() if k not in (*OWN_KEYWORDS, "use_reentrant")})
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
