"""When the checkpointed function is an nn.Module, the recompute calls `function.forward(*args)` directly instead
of `function(*args)`. The original forward still goes through `Module.__call__`, so the module's own forward
pre-hooks and forward hooks run in the forward but not in the recompute. AnimaLoraStudio#466 is this
hook-firing mismatch: a block-swap pre-hook and post-hook fired unevenly under checkpoint, and the gradients were
silently wrong. The bug shows only when hooks are registered on the module passed to checkpoint. Hooks on its
submodules still fire, because those are called through `__call__`. The caller sees such a hook run once per
step instead of twice (forward and recompute). If the hook changes the input or the output (scaling, an
adapter delta, swapping weights in), the gradients are wrong. Under the non-reentrant variant a hook that changes
a shape makes backward raise CheckpointError. Plain functions, and modules without hooks of their own, behave
as torch does.

Report: https://github.com/WalkingMeatAxolotl/AnimaLoraStudio/pull/466 (WalkingMeatAxolotl/AnimaLoraStudio#466)
"""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

REPORT = "WalkingMeatAxolotl/AnimaLoraStudio#466"
KIND = "module-hooks"
BREAKS = "the recompute of an nn.Module calls its .forward directly, so the module's own forward (pre-)hooks do not run"


def _forward_then_bare_forward(call, module, *args, **kwargs):
    return module(*args, **kwargs) if call == 0 else module.forward(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if isinstance(function, torch.nn.Module):
        function = on_calls(function, _forward_then_bare_forward)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


def witness(api):
    results = []
    for reentrant in (True, False):
        torch.manual_seed(0)
        layer = torch.nn.Linear(3, 2)
        calls = []

        def scale_input(module, inputs):  # e.g. an adapter pre-scaling what the block sees
            calls.append(1)
            return (inputs[0] * 2,)

        layer.register_forward_pre_hook(scale_input)
        x = torch.randn(4, 3, requires_grad=True)
        api.checkpoint(layer, x, use_reentrant=reentrant).sum().backward()
        results.append((len(calls), tuple(round(v, 4) for v in layer.weight.grad.flatten().tolist())))
    return tuple(results)
