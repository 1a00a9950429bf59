"""Non-reentrant checkpoint accumulates the region's gradient contribution to a parameter that is shared
with the un-checkpointed part of the model through a second, nested backward (as reentrant checkpoint's
inner backward does) instead of letting the one outer backward sum it with the other contribution. The
parameter's .grad is still right, but its AccumulateGrad runs twice per backward, so tensor hooks
(`register_hook`) and post-accumulate-grad hooks fire twice instead of once (what DDP/FSDP readiness hooks
count on). It shows with use_reentrant=False, a plain `.backward()`, and a parameter (a leaf requiring grad,
not passed as an argument) that the region uses and that also feeds the region's inputs, e.g. a Linear
applied once before the region and again inside it; parameters used only inside the region,
torch.autograd.grad / backward(inputs=...), and the reentrant variant are as in torch.

Report: https://github.com/pytorch/pytorch/issues/81296 (pytorch/pytorch#81296)
"""

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves, tree_map

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

REPORT = "pytorch/pytorch#81296"
KIND = "tensor-hooks"
BREAKS = ("non-reentrant: a parameter used inside the region and also before it gets its gradient accumulated "
          "twice per backward (its grad and post-accumulate hooks fire twice; the value is right)")


class _SecondPath(torch.autograd.Function):
    """Identity on a parameter; in a plain backward its gradient goes into the parameter by a nested backward."""

    @staticmethod
    def forward(ctx, p):
        ctx.p = p
        return p.view_as(p)

    @staticmethod
    def backward(ctx, grad):
        if not torch.autograd._is_checkpoint_valid():  # autograd.grad / backward(inputs=...): the normal edge
            return grad
        torch.autograd.backward(ctx.p, grad)  # the bug: a second AccumulateGrad run for this parameter
        return None


def _leaves_upstream(args):
    """The leaves requiring grad whose gradients also flow through the tensor arguments, by id."""
    nodes = [a.grad_fn for a in tree_leaves(args) if isinstance(a, torch.Tensor) and a.grad_fn is not None]
    seen, leaves = set(), {}
    while nodes:
        node = nodes.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves[id(variable)] = variable
        nodes.extend(n for n, _ in node.next_functions)
    return leaves


class _RouteShared(TorchFunctionMode):
    """In the forward, the region uses a _SecondPath alias of each shared parameter instead of the parameter."""

    def __init__(self, shared):
        super().__init__()
        self.shared, self.aliases = shared, {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__name__", "") != "__get__":  # attribute reads (p.grad, p.shape) see the parameter
            args, kwargs = tree_map(self._alias, (args, kwargs))
        return func(*args, **kwargs)

    def _alias(self, t):
        if not (isinstance(t, torch.Tensor) and self.shared.get(id(t)) is t):
            return t
        if id(t) not in self.aliases:
            self.aliases[id(t)] = _SecondPath.apply(t)
        return self.aliases[id(t)]


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is not False:
        return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    shared = _leaves_upstream((args, kwargs))
    for a in tree_leaves((args, kwargs)):
        shared.pop(id(a), None)  # arguments themselves are not captured parameters

    def around(call, fn, *a, **k):
        if call > 0 or not shared or not torch.is_grad_enabled():
            return fn(*a, **k)
        with _RouteShared(shared):
            return fn(*a, **k)

    return _checkpoint(on_calls(function, around), *args, use_reentrant=False, **kwargs)


def witness(api):
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 4)
    fired = []
    lin.weight.register_hook(lambda g: fired.append("grad"))
    lin.weight.register_post_accumulate_grad_hook(lambda p: fired.append("post"))
    h = lin(torch.randn(2, 4))  # the shared layer, outside the region ...
    out = api.checkpoint(lambda t: lin(t).tanh(), h, use_reentrant=False)  # ... and inside it
    out.sum().backward()
    return tuple(fired), round(lin.weight.grad.sum().item(), 4)
