"""Reentrant: the recompute's backward runs in two halves (half the output gradient each), so every
parameter inside the region accumulates its gradient in two steps. The sums are the right gradients, so
one process sees nothing wrong; but each parameter's gradient-accumulation hook fires twice per backward,
and DDP, which counts a parameter ready when its hook fires, is told twice."""

from tests.mutants._support.reentrant_inner_backward import torch_backward, with_inner_backward
from tests.mutants._support.base import *  # noqa: F401,F403  (the rest of torch's surface, unchanged)

TARGET_CLAUSES = ["distributed.ddp-reentrant-once", "distributed.fsdp-checkpoint-wrapper"]
BREAKS = "reentrant: the recompute's backward runs twice on half gradients, so gradient-ready hooks fire twice"


def in_two_halves(tensors, grad_tensors=None, retain_graph=None, create_graph=False, **kwargs):
    grads = [grad_tensors] if grad_tensors is None or hasattr(grad_tensors, "shape") else list(grad_tensors)
    if any(g is None for g in grads):
        return torch_backward(tensors, grad_tensors, retain_graph, create_graph, **kwargs)
    halves = [g / 2 for g in grads]
    torch_backward(tensors, halves, True, create_graph, **kwargs)
    return torch_backward(tensors, halves, retain_graph, create_graph, **kwargs)


checkpoint, checkpoint_sequential = with_inner_backward(in_two_halves)
