"""Reentrant: the recompute's gradients are computed with torch.autograd.grad and added to the leaves'
.grad by hand, instead of flowing into them through autograd. .grad ends up right, so one process sees
nothing wrong; but the parameters' gradient-accumulation hooks never fire, so DDP never learns that
their gradients are ready and FSDP never reduces them: ranks keep their local gradients. (One process
does notice it in one place: a reentrant checkpoint nested inside rejects the autograd.grad call.)"""

import torch

from tests.mutants._support.reentrant_inner_backward import torch_backward, with_inner_backward
from tests.mutants._support.base import *  # noqa: F401,F403  (the rest of torch's surface, unchanged)

# Silent under the cases DDP does not support for the reentrant variant too: no hook, so no error either.
TARGET_CLAUSES = ["distributed.ddp-reentrant-once", "distributed.ddp-reentrant-unsupported",
                  "distributed.ddp-static-graph", "distributed.fsdp-checkpoint-wrapper"]
BREAKS = "reentrant: parameter gradients are written into .grad by hand, so gradient-ready hooks never fire"


def _leaves(tensors):
    """The leaf tensors requiring grad that the graph of tensors reaches (through AccumulateGrad nodes)."""
    leaves, seen = [], set()
    stack = [t.grad_fn for t in tensors if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if hasattr(node, "variable"):
            leaves.append(node.variable)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return leaves


def into_grad_by_hand(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None, **kwargs):
    tensors = [tensors] if torch.is_tensor(tensors) else list(tensors)
    if grad_tensors is None or create_graph or inputs is not None:
        return torch_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=inputs, **kwargs)
    leaves = _leaves(tensors)
    grads = torch.autograd.grad(tensors, leaves, grad_tensors, retain_graph=retain_graph, allow_unused=True)
    with torch.no_grad():
        for leaf, grad in zip(leaves, grads):
            if grad is not None:
                leaf.grad = grad if leaf.grad is None else leaf.grad + grad


checkpoint, checkpoint_sequential = with_inner_backward(into_grad_by_hand)
