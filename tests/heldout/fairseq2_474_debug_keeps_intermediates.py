"""With debug on (`debug=True`, or `set_checkpoint_debug_enabled(True)`), the operator log that debug mode keeps
for its error trace stores the tensors each operator produced, where it should store only their formatted
descriptions. The log hangs off the region's checkpoint frame, and is only let go when backward recomputes the
region. fairseq2#474 removed its debug flag for this reason: `checkpoint(..., debug=True)` leaked memory in
training. The bug shows only with debug on, under the non-reentrant variant (the only one that accepts debug). Every
intermediate of the region then stays alive from the forward until its backward, so checkpointing saves no
activation memory. If the outputs are dropped without a backward, the intermediates are never freed: the log and
the graph form a cycle through autograd's C++ nodes, which the garbage collector cannot see. Values, gradients and
the debug error trace are unchanged. With debug off everything is as in torch.

Report: https://github.com/facebookresearch/fairseq2/pull/474 (facebookresearch/fairseq2#474)
"""

import contextlib
import gc
import weakref

import torch
import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls
from tests.mutants._support.frame_swap import Frame, frames_of
from tests.mutants._support.hoard import Hoard

REPORT = "facebookresearch/fairseq2#474"
KIND = "memory-lifetime"
BREAKS = "with debug on, the debug log keeps the region's intermediates alive until backward (for good if none comes)"


def checkpoint(function, *args, use_reentrant=None, debug=False, **kwargs):
    global_debug = _torch._checkpoint_debug_enabled
    if use_reentrant is not False or not (global_debug if global_debug is not None else debug):
        return _checkpoint(function, *args, use_reentrant=use_reentrant, debug=debug, **kwargs)
    log = []  # BUG: the forward's operator log holds the tensors, not their descriptions

    class LoggingFrame(Frame):  # the region's frame (alive as long as its graph) carries the log
        def __init__(self, *frame_args):
            super().__init__(*frame_args)
            self.operator_log = log

    def around(call, function, *args, **kwargs):
        if call > 0:  # the backward has come: the log is let go
            log.clear()
        with Hoard(log) if call == 0 else contextlib.nullcontext():
            return function(*args, **kwargs)

    with frames_of(LoggingFrame):
        return _checkpoint(on_calls(function, around), *args, use_reentrant=False, debug=debug, **kwargs)


def witness(api):
    results = []
    for switch in ("argument", "global"):
        kept = []
        x = torch.ones(8, requires_grad=True)

        def region(t):
            hidden = t.sin()
            kept.append(weakref.ref(hidden))
            return hidden.exp()

        with api.set_checkpoint_debug_enabled(True) if switch == "global" else contextlib.nullcontext():
            out = api.checkpoint(region, x, use_reentrant=False, debug=switch == "argument")
        gc.collect()
        alive_before_backward = kept[0]() is not None
        out.sum().backward()
        results.append((alive_before_backward, round(x.grad.sum().item(), 4)))
    return tuple(results)
