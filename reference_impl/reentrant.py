"""Reentrant checkpoint (``use_reentrant=True``): one custom autograd Function around the region.

Forward: ``autograd.Function.forward`` runs with grad disabled, so the function records no graph
and saves nothing; the Function saves only the tensor inputs. Backward: re-run the function with
grad enabled on detached copies of the inputs (under the forward's RNG and autocast state), then
run a nested ("reentrant") ``torch.autograd.backward`` through that fresh graph and return the
gradients it left on the detached inputs. The recompute writes no state from outside the region
(``outside_state.py``).

Only top-level tensor arguments are inputs of the Function, so only they make the output require
grad; tensors nested in lists or dicts are passed through as they are.
"""

from __future__ import annotations

import warnings

import torch

from reference_impl.outside_state import OutsideStateKept
from reference_impl.rng import ForwardState

_engine = torch.autograd.Variable._execution_engine


class _Checkpoint(torch.autograd.Function):
    @staticmethod
    def forward(ctx, function, state, *args):
        ctx.function, ctx.state = function, state
        ctx.tensor_positions = [i for i, arg in enumerate(args) if isinstance(arg, torch.Tensor)]
        ctx.args = [None if isinstance(arg, torch.Tensor) else arg for arg in args]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_positions))
        return function(*args)  # grad mode is off here: nothing inside is recorded

    @staticmethod
    def backward(ctx, *grad_outputs):
        # The nested backward below cannot honour torch.autograd.grad's or backward(inputs=...)'s
        # choice of inputs: its gradients would go to every leaf of the recomputed graph.
        if not _engine.is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, checkpoint is incompatible with torch.autograd.grad() and "
                "with passing `inputs` to .backward(). Use use_reentrant=False, or call .backward() "
                "without `inputs`."
            )
        args = list(ctx.args)
        for position, tensor in zip(ctx.tensor_positions, ctx.saved_tensors):
            args[position] = tensor.detach().requires_grad_(tensor.requires_grad)
        with torch.enable_grad(), ctx.state.replayed(), OutsideStateKept():
            outputs = ctx.function(*args)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        differentiable = [
            (output, grad)
            for output, grad in zip(outputs, grad_outputs)
            if isinstance(output, torch.Tensor) and output.requires_grad
        ]
        if not differentiable:
            raise RuntimeError("none of the outputs of the checkpointed function requires grad, so "
                               "this checkpoint is not needed (or the function detaches its outputs)")
        torch.autograd.backward(*zip(*differentiable))
        grads = [arg.grad if isinstance(arg, torch.Tensor) else None for arg in args]
        return None, None, *grads


def checkpoint(function, args, preserve_rng_state):
    if not any(isinstance(arg, torch.Tensor) and arg.requires_grad for arg in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", UserWarning, stacklevel=3)
    state = ForwardState(args, {}, preserve_rng_state)
    return _Checkpoint.apply(function, state, *args)
