"""The `debug` argument is tested with `debug is not None` instead of for its truth, so an explicit `debug=False`
counts as debug enabled. Megatron-LM#4469 fixed the same test on a flag: `fp8 is not None` made the default
fp8=False enter the FP8 recompute context for every checkpoint. Omitting `debug` behaves as torch does. The bug
shows only when `debug=False` is passed explicitly. `checkpoint(f, x, use_reentrant=True, debug=False)` then raises
torch's "Passing `context_fn` or `debug` is only supported when use_reentrant=False" ValueError.
`debug=False` together with a non-default `context_fn` raises "debug=True is incompatible with non-default
context_fn". Non-reentrant checkpoint errors carry the debug operator trace, and the region runs under the
logging dispatch mode. torch accepts all of these silently and adds no trace. As in torch,
`set_checkpoint_debug_enabled(...)` still overrides the argument.

Report: https://github.com/NVIDIA/Megatron-LM/pull/4469 (NVIDIA/Megatron-LM#4469)
"""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

REPORT = "NVIDIA/Megatron-LM#4469"
KIND = "settings-managers"
BREAKS = "an explicit debug=False turns debug on (reentrant and context_fn calls raise, errors carry the trace)"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if kwargs.get("debug", None) is False:  # BUG: the flag is read with `debug is not None`, so False means "on"
        kwargs["debug"] = True
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


def witness(api):
    results = []
    x = torch.ones(3, requires_grad=True)
    try:
        api.checkpoint(torch.sin, x, use_reentrant=True, debug=False).sum().backward()
        results.append("ok")
    except ValueError as e:
        results.append(type(e).__name__)
    calls = []

    def changes_shape(t):  # a recompute that differs from the forward: CheckpointError either way
        calls.append(1)
        return (t.repeat(len(calls)) ** 2).sum()

    try:
        api.checkpoint(changes_shape, x, use_reentrant=False, debug=False).backward()
    except api.CheckpointError as e:
        results.append("Stack traces of the operators" in str(e))
    return tuple(results)
