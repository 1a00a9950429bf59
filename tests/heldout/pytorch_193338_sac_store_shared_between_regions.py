"""Selective activation checkpointing keeps the outputs it saves in one store shared by every region (keyed
by op and per-op call index, like torch's per-region store), instead of a fresh store per
create_selective_checkpoint_contexts call, i.e. per checkpoint call. Each region counts its op calls from 0,
so a second region's forward overwrites the first region's entries at the same (op, index). It shows when
two or more SAC regions that run the same saved op (e.g. two blocks each doing a MUST_SAVE aten.mm) both
run their forward before their backward: the later region's backward consumes the shared entry, and the
earlier region's backward then finds it consumed and raises "Trying to backward an extra time" (or, with
different call counts, "invocation index ... not found"), where torch gives the gradients. Each region
alone, or regions whose forward and backward alternate, behave as in torch; plain checkpoint is torch's.

Report: https://github.com/pytorch/pytorch/issues/193338 (pytorch/pytorch#193338)
"""

from collections import defaultdict
from functools import partial

import torch
import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)

REPORT = "pytorch/pytorch#193338"
KIND = "sac-policy"
BREAKS = ("selective checkpointing: regions whose forwards all run before their backwards share one store of "
          "saved op outputs, so all but the last region fail in backward")

_shared_store = defaultdict(dict)  # the bug: one store for every region, instead of one per call


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    caching, cached = _torch.create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation)
    caching.storage = cached.storage = _shared_store
    return caching, cached


def witness(api):
    torch.manual_seed(0)
    w1, w2 = torch.randn(3, 3, requires_grad=True), torch.randn(3, 3, requires_grad=True)
    x = torch.randn(2, 3, requires_grad=True)
    context_fn = partial(api.create_selective_checkpoint_contexts, [torch.ops.aten.mm.default])
    h = api.checkpoint(lambda t: (t @ w1).sin(), x, use_reentrant=False, context_fn=context_fn)
    out = api.checkpoint(lambda t: (t @ w2).sin(), h, use_reentrant=False, context_fn=context_fn)
    try:
        out.sum().backward()
    except RuntimeError as e:
        return type(e).__name__, str(e).split(".")[0]
    return round(w1.grad.sum().item(), 4), round(w2.grad.sum().item(), 4), round(x.grad.sum().item(), 4)
