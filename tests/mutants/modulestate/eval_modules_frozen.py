"""A module in eval mode is taken for a frozen one: its parameters are set not to require grad for the call, so the
non-reentrant forward records no use of them and they get no gradient, while its inputs still do. Eval mode says
nothing of gradients (dropout off, running statistics used); a frozen backbone is frozen by requires_grad, and a module
evaluated for a gradient penalty or a saliency map in eval mode still differentiates through its weights. Plain
functions and train-mode modules are torch's."""

import functools

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "the parameters of a module in eval mode are frozen for the call: they get no gradient"


def _module_of(function):
    """The module a checkpointed callable runs: the module itself, a bound forward's, or a partial's first argument."""
    if isinstance(function, functools.partial):
        return _module_of(function.args[0]) if function.args else _module_of(function.func)
    return function if isinstance(function, torch.nn.Module) else getattr(function, "__self__", None)


def checkpoint(function, *args, **kwargs):
    module = _module_of(function)
    if not isinstance(module, torch.nn.Module) or module.training:
        return _checkpoint(function, *args, **kwargs)
    frozen = [p for p in module.parameters() if p.requires_grad]
    for parameter in frozen:
        parameter.requires_grad_(False)
    try:
        return _checkpoint(function, *args, **kwargs)
    finally:
        for parameter in frozen:
            parameter.requires_grad_(True)
