"""The recompute runs the function on plain-tensor aliases of tensor-subclass arguments: each argument whose class
is a torch.Tensor subclass (other than nn.Parameter) is turned into a plain tensor with `.as_subclass(torch.Tensor)`
before the recompute. Gradients still flow through the alias, but the subclass's `__torch_function__` no longer
takes part. pytorch#147995 is the same loss with a metadata-changing torch-function mode that the recompute did not
run under. The bug shows when a tensor-subclass argument changes what operators do (scaling, quantizing, rerouting
an op, casting). The forward is right. The recompute computes something else, so the gradients differ silently
from torch's: the reentrant variant differentiates the plain computation, and the non-reentrant one feeds
its values to the forward's graph. Under the non-reentrant variant, a subclass that changes a dtype or shape makes
backward raise CheckpointError. torch's own recompute loses the subclass too, so the mutant matches torch, in two
cases: when the caller's backward itself runs under the subclass's `__torch_function__` (a backward started on a
subclass output), and, under the reentrant variant, for a subclass whose `detach` returns plain tensors. Plain
tensor arguments, Parameters, and subclasses without their own `__torch_function__` behaviour are unaffected.

Report: https://github.com/pytorch/pytorch/issues/147995 (pytorch/pytorch#147995)
"""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

REPORT = "pytorch/pytorch#147995"
KIND = "tensor-subclass"
BREAKS = "tensor-subclass arguments are recomputed as plain tensors: their __torch_function__ is lost (wrong gradients)"


def _plain(arg):
    if isinstance(arg, torch.Tensor) and type(arg) is not torch.Tensor and not isinstance(arg, torch.nn.Parameter):
        with torch._C.DisableTorchFunctionSubclass():  # else the subclass would wrap the result back
            return arg.as_subclass(torch.Tensor)
    return arg


def _recompute_on_plain_tensors(call, function, *args, **kwargs):
    if call > 0:
        args = [_plain(a) for a in args]
    return function(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    return _checkpoint(on_calls(function, _recompute_on_plain_tensors), *args, use_reentrant=use_reentrant, **kwargs)


class _Base2(torch.Tensor):
    """A subclass whose exp is base 2 (a stand-in for any subclass that reroutes an operator)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.Tensor.exp:
            func = torch.Tensor.exp2
        return super().__torch_function__(func, types, args, kwargs or {})


def witness(api):
    results = []
    for reentrant in (True, False):
        x = torch.tensor([0.5, 1.0, 2.0]).as_subclass(_Base2).requires_grad_()
        # A plain output: a backward started on a subclass output would run under the subclass's
        # __torch_function__, which turns the subclass off for torch's recompute too.
        out = api.checkpoint(lambda t: (t.exp() * 3).as_subclass(torch.Tensor), x, use_reentrant=reentrant)
        out.sum().backward()
        results.append((tuple(round(v, 4) for v in out.tolist()), tuple(round(v, 4) for v in x.grad.tolist())))
    return tuple(results)
