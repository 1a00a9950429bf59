"""A small self-contained reentrant checkpoint (an autograd.Function that recomputes in its backward),
with switches that each turn one documented behaviour off. CPU RNG only; no device RNG states."""

import warnings
from dataclasses import dataclass

import torch
from torch.utils.checkpoint import checkpoint as torch_checkpoint


@dataclass(frozen=True)
class Switches:
    reject_grad_and_inputs: bool = True  # raise for autograd.grad / backward(inputs=...)
    raise_without_differentiable_output: bool = True  # raise when no recomputed output requires grad
    accumulate_into_parameters: bool = True  # inner backward (True) or autograd.grad w.r.t. the inputs only
    keep_parameter_grads: bool = True  # accumulate into the .grad of parameters used inside (False: overwrite it)
    pair_gradients_by_output: bool = True  # each gradient with its own output (False: with the n-th one requiring grad)


class _Checkpoint(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run, switches, preserve_rng_state, *args):
        ctx.run, ctx.switches = run, switches
        if not any(torch.is_tensor(a) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", UserWarning)
        ctx.rng_state = torch.get_rng_state() if preserve_rng_state else None
        ctx.positions = [i for i, a in enumerate(args) if torch.is_tensor(a)]
        ctx.args = [None if torch.is_tensor(a) else a for a in args]
        ctx.save_for_backward(*(args[i] for i in ctx.positions))
        return run(*args)  # autograd.Function.forward already runs without grad

    @staticmethod
    def backward(ctx, *grads):
        if ctx.switches.reject_grad_and_inputs and not torch.autograd._is_checkpoint_valid():
            raise RuntimeError("reentrant checkpoint does not support autograd.grad or backward(inputs=...)")
        args = list(ctx.args)
        for i, tensor in zip(ctx.positions, ctx.saved_tensors):
            args[i] = tensor.detach().requires_grad_(tensor.requires_grad)
        with torch.random.fork_rng(devices=[], enabled=ctx.rng_state is not None):
            if ctx.rng_state is not None:
                torch.set_rng_state(ctx.rng_state)
            with torch.enable_grad():
                outputs = ctx.run(*args)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if torch.is_tensor(o) and o.requires_grad]
        if not ctx.switches.pair_gradients_by_output:  # the tensors' gradients, in order, to those requiring grad
            tensor_grads = [g for o, g in zip(outputs, grads) if torch.is_tensor(o)]
            pairs = list(zip([o for o, _ in pairs], tensor_grads))
        inputs = [args[i] for i in ctx.positions]
        if not pairs:
            if ctx.switches.raise_without_differentiable_output:
                raise RuntimeError("none of the checkpoint's outputs requires grad")
            return (None, None, None) + (None,) * len(args)
        outs, out_grads = zip(*pairs)
        if not ctx.switches.keep_parameter_grads:
            for parameter in _leaves_of(outs, besides=inputs):
                parameter.grad = None
        if ctx.switches.accumulate_into_parameters:
            torch.autograd.backward(outs, out_grads)
            input_grads = [t.grad for t in inputs]
        else:
            wanted = [t for t in inputs if t.requires_grad]
            found = iter(torch.autograd.grad(outs, wanted, out_grads, allow_unused=True))
            input_grads = [next(found) if t.requires_grad else None for t in inputs]
        grads_by_position = dict(zip(ctx.positions, input_grads))
        return (None, None, None) + tuple(grads_by_position.get(i) for i in range(len(args)))


def _leaves_of(outputs, besides):
    """The leaves that require grad in the graph of outputs, other than those in besides."""
    nodes, seen, leaves = [o.grad_fn for o in outputs], set(), []
    while nodes:
        node = nodes.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)  # an AccumulateGrad node's leaf
        if variable is not None and not any(variable is b for b in besides):
            leaves.append(variable)
        nodes.extend(next_node for next_node, _ in node.next_functions)
    return leaves


def reentrant_checkpoint(switches=Switches()):
    """checkpoint(function, *args, use_reentrant=..., preserve_rng_state=True) with these switches."""

    def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
        if kwargs:
            raise ValueError(f"Unexpected keyword arguments: {','.join(kwargs)}")
        return _Checkpoint.apply(function, switches, preserve_rng_state, *args)

    return checkpoint


def reentrant_beside_torch(switches):
    """checkpoint whose reentrant variant is the one above with these switches, and whose non-reentrant
    variant is torch's."""
    reentrant = reentrant_checkpoint(switches)

    def checkpoint(function, *args, use_reentrant=None, **kwargs):
        if use_reentrant:
            return reentrant(function, *args, **kwargs)
        return torch_checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)

    return checkpoint
