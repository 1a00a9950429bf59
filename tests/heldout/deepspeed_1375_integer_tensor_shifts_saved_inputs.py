"""Reentrant variant: only floating-point (and complex) tensor arguments go into the saved tensors. Integer and
bool tensor arguments are kept with the non-tensor arguments. The backward rebuilds the argument list by walking the
original arguments, and gives the k-th tensor argument `saved[k]`, where k counts every tensor argument, integer
ones included, not only the saved ones. In DeepSpeed#1375 an int tensor was kept out of the contiguous activation
buffer but the loop index was not adjusted. The bug shows with `use_reentrant=True` when a floating tensor argument
comes after an integer or bool tensor argument, e.g. `checkpoint(f, idx_long, x, use_reentrant=True)`. The forward
is correct. The backward raises IndexError (tuple index out of range): the last floating argument's k is past the
end of the saved tensors, and any floating argument between took another's place. torch and the un-checkpointed
call work. Orderings with every floating tensor before the integer ones, calls without integer tensors, and the
non-reentrant variant behave as torch does.

Report: https://github.com/deepspeedai/DeepSpeed/issues/1375 (deepspeedai/DeepSpeed#1375)
"""

import torch
import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import patched

REPORT = "deepspeedai/DeepSpeed#1375"
KIND = "non-tensor-args-outputs"
BREAKS = "reentrant: a floating tensor argument after an integer or bool tensor one makes backward raise IndexError"


def _saved(arg):
    return isinstance(arg, torch.Tensor) and (arg.is_floating_point() or arg.is_complex())


_Torch = _torch.CheckpointFunction  # torch's reentrant Function (the module attribute is swapped during our calls)


class _CheckpointFunction(_Torch):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        outputs = _Torch.forward(ctx, run_function, preserve_rng_state, *args)
        ctx.kept = [None if _saved(a) else a for a in args]  # integer tensors ride with the non-tensors
        ctx.tensor_count = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
        ctx.save_for_backward(*(a for a in args if _saved(a)))
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        saved, inputs = ctx.saved_tensors, list(ctx.kept)
        for k, i in enumerate(ctx.tensor_count):  # BUG: k counts every tensor argument, not the saved ones
            if inputs[i] is None:
                inputs[i] = saved[k]
        ctx.inputs, ctx.tensor_indices = inputs, []  # torch's backward takes the arguments from here as they are
        return _Torch.backward(ctx, *grads)


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False:
        return _checkpoint(function, *args, use_reentrant=False, **kwargs)
    with patched(_torch, "CheckpointFunction", lambda torch_function: _CheckpointFunction):
        return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


def witness(api):
    torch.manual_seed(0)
    results = []
    for args in ((torch.randn(3, requires_grad=True), torch.tensor([2, 0])),  # floating first: fine
                 (torch.tensor([2, 0]), torch.randn(3, requires_grad=True))):  # integer first: shifted
        try:
            out = api.checkpoint(lambda a, b: (a.exp()[b] if a.is_floating_point() else b.exp()[a]), *args,
                                 use_reentrant=True)
            out.sum().backward()
            results.append(tuple(round(v, 4) for a in args if a.requires_grad for v in a.grad.tolist()))
        except IndexError as e:
            results.append(type(e).__name__)
    return tuple(results)
