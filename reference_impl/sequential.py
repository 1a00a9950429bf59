"""checkpoint_sequential: checkpoint a chain of modules or functions segment by segment."""

from __future__ import annotations

from torch import nn

from conformance.data.vocabulary import sequential_segments


def _run(functions, start, stop):
    """A function that runs functions[start], ..., functions[stop - 1] in order on one input."""

    def forward(input):
        for i in range(start, stop):
            input = functions[i](input)
        return input

    return forward


def checkpoint_sequential(checkpoint, functions, segments, input, use_reentrant, preserve_rng_state):
    """Split functions into `segments` chunks of len(functions) // segments; checkpoint all but the last.

    The last chunk runs plainly: its activations are needed right away by the backward, so
    recomputing them would cost time and save nothing. It also absorbs the remainder of the division.
    """
    if isinstance(functions, nn.Sequential):
        functions = list(functions.children())
    stop = 0
    for start, stop in sequential_segments(len(functions), segments):
        input = checkpoint(_run(functions, start, stop), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve_rng_state)
    return _run(functions, stop, len(functions))(input)
