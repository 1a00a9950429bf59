"""Selective checkpointing hands the policy the op's OpOverloadPacket (`torch.ops.aten.mm`) instead of the
concrete OpOverload it dispatched (`torch.ops.aten.mm.default`), and the op-list form compares the packets
against the list's OpOverloads the same way. A policy written as documented, e.g.
`MUST_SAVE if op in {aten.mm.default} else PREFER_RECOMPUTE`, then never matches: there is no error and the
gradients are right, but nothing is saved, so the "saved" ops run again in backward (and a policy written
against packets unexpectedly matches). It shows only with create_selective_checkpoint_contexts (use_reentrant=
False, context_fn=partial(create_selective_checkpoint_contexts, policy_or_list)); plain checkpoint is torch's.

Report: https://github.com/pytorch/pytorch/issues/176065 (pytorch/pytorch#176065)
"""

import torch
import torch.utils.checkpoint as _torch
from functools import partial

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)

REPORT = "pytorch/pytorch#176065"
KIND = "sac-policy"
BREAKS = "the selective-checkpoint policy (and the op list) is matched against OpOverloadPackets, not OpOverloads"


def _packet(op):
    return getattr(op, "overloadpacket", op)  # the bug: aten.mm.default -> aten.mm (higher-order ops as they are)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    if isinstance(policy_fn_or_list, list):
        _torch.create_selective_checkpoint_contexts(policy_fn_or_list)  # torch's validation of the list
        ops = policy_fn_or_list

        def policy(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if _packet(op) in ops else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        def policy(ctx, op, *args, **kwargs):
            return policy_fn_or_list(ctx, _packet(op), *args, **kwargs)
    else:
        policy = policy_fn_or_list  # torch raises its TypeError
    return _torch.create_selective_checkpoint_contexts(policy, allow_cache_entry_mutation)


def witness(api):
    from torch.utils._python_dispatch import TorchDispatchMode

    class CountMM(TorchDispatchMode):
        count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            CountMM.count += func is torch.ops.aten.mm.default
            return func(*args, **(kwargs or {}))

    torch.manual_seed(0)
    w = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(2, 3, requires_grad=True)
    seen = set()

    def policy(ctx, op, *args, **kwargs):
        seen.add(type(op).__name__)
        return api.CheckpointPolicy.MUST_SAVE if op is torch.ops.aten.mm.default else \
            api.CheckpointPolicy.PREFER_RECOMPUTE

    out = api.checkpoint(lambda t: (t @ w).sin().sum(), x, use_reentrant=False,
                         context_fn=partial(api.create_selective_checkpoint_contexts, policy))
    with CountMM():  # backward: 2 mm for the gradients, plus 1 if the saved mm is recomputed
        out.backward()
    return tuple(sorted(seen)), CountMM.count, round(w.grad.sum().item(), 4)
