"""An output that is a view of a tensor created inside the region whose memory was modified in place (e.g.
`(x @ w)[:].relu_()`, or InstanceNorm followed by ReLU(inplace=True) as the last op) is handed back through
view/in-place rebasing onto the region's internal base rather than through the checkpoint: its grad_fn is an
AsStridedBackward whose graph ends at that internal base, not at the checkpoint node. The value is right, but
backward through that output never reaches the region (no recompute) and leaves the inputs' and parameters'
.grad as None, where the un-checkpointed function (and torch) give gradients. Both variants; outputs that are
not in-place-modified views of intermediates (plain results, views not modified in place, arguments and their
views) are handed back as in torch.

Report: https://github.com/pytorch/pytorch/issues/36383 (pytorch/pytorch#36383),
https://github.com/pytorch/pytorch/issues/26546, https://github.com/pytorch/pytorch/issues/21970
"""

import torch
from torch.utils._pytree import tree_leaves

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

REPORT = "pytorch/pytorch#36383"
KIND = "in-place"
BREAKS = ("an output that is a view of an intermediate modified in place (e.g. (x @ w)[:].relu_()) comes back "
          "disconnected from the region: no gradients to inputs or parameters")


def _items(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _inplace_view_of_intermediate(t, args):
    if not (isinstance(t, torch.Tensor) and t._is_view() and t._version > 0):
        return False
    storages = {a.untyped_storage().data_ptr() for a in tree_leaves(args) if isinstance(a, torch.Tensor)}
    return t.untyped_storage().data_ptr() not in storages


def _rebased_on_internal_base(t):
    """The same values, as a view of the region's internal base that ends the graph there."""
    base = t._base.detach().requires_grad_()
    return base.as_strided(t.size(), t.stride(), t.storage_offset())


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    marked = []

    def around(call, fn, *a, **k):
        out = fn(*a, **k)
        if call == 0:
            marked[:] = [i for i, t in enumerate(_items(out)) if _inplace_view_of_intermediate(t, (a, k))]
        return out

    out = _checkpoint(on_calls(function, around), *args, use_reentrant=use_reentrant, **kwargs)
    if not marked:
        return out
    items = _items(out)
    for i in marked:
        if items[i].requires_grad:
            items[i] = _rebased_on_internal_base(items[i])
    return type(out)(items) if isinstance(out, (tuple, list)) else items[0]


def witness(api):
    results = []
    for use_reentrant in (True, False):
        torch.manual_seed(0)
        w = torch.randn(3, 3, requires_grad=True)
        x = torch.randn(2, 3, requires_grad=True)
        out = api.checkpoint(lambda t: (t @ w)[:].relu_(), x, use_reentrant=use_reentrant)
        out.sum().backward()
        results.append((round(out.sum().item(), 4), w.grad is not None and round(w.grad.sum().item(), 4),
                        x.grad is not None and round(x.grad.sum().item(), 4)))
    return tuple(results)
