"""Makes every tensor argument of the recompute a leaf that requires grad (DeepSpeed's detach_variable sets
``x.requires_grad = True`` on each input), integer and bool tensors included: those cannot require grad,
so backward fails as soon as a function takes indices or a mask. (For floating arguments this is what the
reentrant variant does anyway; they are left alone here.)"""

import torch

from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "int64 and bool tensor arguments are made to require grad in the recompute, which raises"
UPSTREAM_TESTS = ["test_autograd.py::TestSelectiveActivationCheckpoint::test_output_already_has_autograd_meta"]


def _integral_made_differentiable(call, function, *args, **kwargs):
    if call > 0:
        args = tuple(a.detach().requires_grad_() if isinstance(a, torch.Tensor) and not a.is_floating_point()
                     and not a.is_complex() else a for a in args)
    return function(*args, **kwargs)


def checkpoint(function, *args, **kwargs):
    return _checkpoint(on_calls(function, _integral_made_differentiable), *args, **kwargs)
