"""Non-reentrant in name only: the region is an autograd.Function whose backward recomputes and runs
an inner backward (the reentrant mechanism, without its check). autograd.grad cannot reach the
parameters used inside, and backward(inputs=...) leaks .grad into parameters not in inputs. A tensor used
inside and outside the region gets its gradient in two backward passes, so its hook fires twice
(pytorch/pytorch#81296), and the forward records no graph for the function to hook."""

from tests.mutants._support.mini_reentrant import Switches, reentrant_checkpoint
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

# The reentrant mechanism also loses what the non-reentrant variant adds on nested tensors, inputs
# that do not require grad and detached outputs, so those clauses flag it too.
TARGET_CLAUSES = ["gradapi.non-reentrant-grad", "gradapi.non-reentrant-backward-inputs",
                  "nested.non-reentrant-participates", "detached.non-reentrant-supported",
                  "reqgrad.non-reentrant-gradients", "gradmode.non-reentrant-hooks-fire-once"]
BREAKS = "non-reentrant: autograd.grad and backward(inputs=...) go through an inner backward of the recompute"

_inner_backward = reentrant_checkpoint(Switches(reject_grad_and_inputs=False))


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False:
        return _inner_backward(function, *args, **kwargs)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
