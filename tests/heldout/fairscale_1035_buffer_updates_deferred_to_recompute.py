"""BatchNorm running-stat updates are deferred to the recompute. In the original forward, every BatchNorm module
that runs inside the region works on throwaway copies of its running_mean, running_var and num_batches_tracked,
so the momentum update and the `num_batches_tracked += 1` are lost. The recompute updates the real buffers, as
torch's does. fairscale#1035 is this: patch_batchnorm let checkpointed BN update its running stats only when grad
was enabled, that is in the recompute. The bug shows for train-mode BatchNorm (track_running_stats=True) inside a
checkpointed region. torch updates the buffers once in the forward and once more in every recompute. The mutant
updates them one time fewer. A forward whose output is never backpropagated (an evaluation in train mode, a skipped
step, a region called under no_grad) leaves the buffers untouched, where torch updates them once. After forward
and backward the buffers have had one update, where torch's have had two, and `num_batches_tracked` is 1 fewer.
Regions without BatchNorm, and eval-mode BatchNorm, behave as torch does.

Report: https://github.com/facebookresearch/fairscale/issues/1035 (facebookresearch/fairscale#1035)
"""

import torch
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

REPORT = "facebookresearch/fairscale#1035"
KIND = "module-mode"
BREAKS = "train-mode BatchNorm's running stats are not updated in the forward, only in the recompute"

_BUFFERS = ("running_mean", "running_var", "num_batches_tracked")


def _forward_without_stat_updates(call, function, *args, **kwargs):
    if call > 0:  # the recompute updates the buffers as usual
        return function(*args, **kwargs)
    swapped = {}  # module -> its real buffers, while it runs on copies

    def pre_hook(module, inputs):
        if isinstance(module, _BatchNorm) and module.training and module.track_running_stats:
            swapped[module] = {n: getattr(module, n) for n in _BUFFERS}
            for name, buffer in swapped[module].items():
                setattr(module, name, None if buffer is None else buffer.clone())

    def give_back(module, *_):
        for name, buffer in swapped.pop(module, {}).items():
            setattr(module, name, buffer)

    pre, post = register_module_forward_pre_hook(pre_hook), register_module_forward_hook(give_back)
    try:
        return function(*args, **kwargs)
    finally:
        pre.remove()
        post.remove()
        for module in list(swapped):
            give_back(module)


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    return _checkpoint(on_calls(function, _forward_without_stat_updates), *args, use_reentrant=use_reentrant,
                       **kwargs)


def witness(api):
    results = []
    for reentrant in (True, False):
        torch.manual_seed(0)
        block = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3))
        bn = block[1]
        x = torch.randn(8, 3, requires_grad=True)
        api.checkpoint(block, x, use_reentrant=reentrant)  # an evaluation pass in train mode: no backward
        after_forward = (bn.num_batches_tracked.item(), round(bn.running_mean.sum().item(), 4))
        api.checkpoint(block, x, use_reentrant=reentrant).sum().backward()
        results.append((after_forward, (bn.num_batches_tracked.item(), round(bn.running_mean.sum().item(), 4))))
    return tuple(results)
