"""When the checkpointed function is an nn.Module in eval mode (`training == False`), checkpoint assumes
inference and runs it under `torch.no_grad()` in both variants. This reads the module's mode as the grad mode.
TransformerEngine#72 made the same mistake: its modules used `self.training` to decide whether to build the
graph, so an eval-mode module gave no gradients (diffusers#9850 gated checkpointing on `module.training` in the
same way). The bug shows when an eval-mode module is called through checkpoint with grad enabled, for example a
frozen-dropout base with LoRA adapters, or a saliency or gradient-penalty pass in eval mode. The output has
`requires_grad == False`, so backward raises "element 0 of tensors does not require grad" or the parameters and
inputs get no `.grad`. torch, and the un-checkpointed eval-mode module, give the usual gradients. Train-mode
modules and plain functions are unaffected.

Report: https://github.com/NVIDIA/TransformerEngine/pull/72 (NVIDIA/TransformerEngine#72),
https://github.com/huggingface/diffusers/issues/9850 (huggingface/diffusers#9850)
"""

import contextlib

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

REPORT = "NVIDIA/TransformerEngine#72"
KIND = "module-mode"
BREAKS = "an nn.Module in eval mode is run under no_grad: its output does not require grad and nothing gets gradients"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    inference = isinstance(function, torch.nn.Module) and not function.training  # BUG: module mode is not grad mode
    with torch.no_grad() if inference else contextlib.nullcontext():
        return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


def witness(api):
    results = []
    for reentrant in (True, False):
        torch.manual_seed(0)
        block = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Dropout(0.5)).eval()
        x = torch.randn(4, 3, requires_grad=True)
        out = api.checkpoint(block, x, use_reentrant=reentrant)
        try:
            out.sum().backward()
            results.append((out.requires_grad, tuple(round(v, 4) for v in x.grad.flatten().tolist())))
        except RuntimeError as e:
            results.append((out.requires_grad, type(e).__name__))
    return tuple(results)
