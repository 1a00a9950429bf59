"""When no tensor argument requires grad, whether the region needs a graph at all is decided from the callable's
parameters (those of an nn.Module, or of the module behind a bound method). That answer is memoized per module on
its first such call and never re-checked. ms-swift#10142 cached one "requires grad" answer in the same way, and the
answer went stale once layers were unfrozen. A region judged frozen comes back cut from the graph. The bug shows
under the non-reentrant variant with a freeze schedule that changes, for example `layer.requires_grad_(False)`,
then `checkpoint(layer, x)` with an `x` that does not require grad, then `layer.requires_grad_(True)` and the same
call again. From then on the output does not require grad and `layer.weight.grad` stays None, whereas torch (and
the un-checkpointed call) gives the layer its weight gradients. Regions whose inputs require grad, plain functions,
the reentrant variant, and modules whose freezing never changes behave as torch does.

Report: https://github.com/modelscope/ms-swift/pull/10142 (modelscope/ms-swift#10142)
"""

import weakref

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import map_tensors

REPORT = "modelscope/ms-swift#10142"
KIND = "grad-mode"
BREAKS = ("non-reentrant, no input requiring grad: a module's 'has trainable parameters' answer is memoized on its "
          "first call, so after unfreezing its output has no graph and its parameters get no gradient")

_trainable = weakref.WeakKeyDictionary()  # module -> its first answer (BUG: never re-checked)


def _module_of(function):
    owner = getattr(function, "__self__", function)
    return owner if isinstance(owner, torch.nn.Module) else None


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    out = _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    module = _module_of(function)
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
    if use_reentrant is not False or module is None or any(t.requires_grad for t in tensors):
        return out
    if module not in _trainable:
        _trainable[module] = any(p.requires_grad for p in module.parameters())
    if _trainable[module]:
        return out
    # "Frozen": no graph for this region.
    return map_tensors(out, lambda t: t.detach() if t.requires_grad else t)


def witness(api):
    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 2)
    x = torch.randn(4, 3)
    layer.requires_grad_(False)
    first = api.checkpoint(layer, x, use_reentrant=False)  # frozen: no graph, as it should be
    layer.requires_grad_(True)  # unfreeze
    second = api.checkpoint(layer, x, use_reentrant=False)
    if second.requires_grad:
        second.sum().backward()
    grad = None if layer.weight.grad is None else tuple(round(v, 4) for v in layer.weight.grad.flatten().tolist())
    return first.requires_grad, second.requires_grad, grad
