"""checkpoint_sequential stashes the RNG state for its first two segments only (as if from a two-slot
cache); later segments re-draw their dropout masks in the recompute. Only seen with dropout AND
segments > 3 (three or more checkpointed segments), which fixed examples rarely combine: the property
tests' random depths and segment counts find it."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint

TARGET_CLAUSES = ["rng.same-gradients"]
BREAKS = "checkpoint_sequential passes preserve_rng_state to its first two segments only"


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(functions, torch.nn.Sequential):
        functions = list(functions.children())

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for index, start in enumerate(range(0, size * (segments - 1), size)):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve and index < 2)  # the bug: `and index < 2`
    return run(end + 1, len(functions) - 1)(input)
