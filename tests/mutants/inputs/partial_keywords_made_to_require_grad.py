"""Tensors bound into the checkpointed function's functools.partial are made to require grad, so that the
reentrant variant would count them as inputs (the work-around users applied to the reentrant variant's
requirement, huggingface/peft#1142, huggingface/transformers#21381), changing the caller's tensors:
transformers binds a block's attention mask and position embeddings into such a partial.

Flagged by the models area only (test_models.py: llama, mixtral); the small-function tests hand their
tensors to checkpoint as arguments."""

import functools

import torch
from torch.utils._pytree import tree_flatten

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["inputs.unchanged"]
BREAKS = "floating tensors bound in a functools.partial's keywords are set to require grad"


def checkpoint(function, *args, **kwargs):
    if isinstance(function, functools.partial):
        for t in tree_flatten(function.keywords)[0]:
            if isinstance(t, torch.Tensor) and t.is_floating_point() and t.is_leaf and not t.requires_grad:
                t.requires_grad_(True)
    return _checkpoint(function, *args, **kwargs)
