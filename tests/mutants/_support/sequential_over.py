"""checkpoint_sequential with a breakable split, for the mutants that get the segmenting wrong.
(Mutants that only change checkpoint use conformance.adapters._support.sequential_over, the
documented split over any checkpoint.)"""

import torch

from conformance.data.vocabulary import sequential_segments as even_chunks  # the documented split, to break


def _run(functions):
    def run(x):
        for function in functions:
            x = function(x)
        return x

    return run


def sequential_over(checkpoint, chunks=even_chunks, children=lambda seq: list(seq.children())):
    """checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs) that
    checkpoints chunks(len(functions), segments) with checkpoint and runs the rest plainly."""

    def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
        preserve = kwargs.pop("preserve_rng_state", True)
        if kwargs:
            raise ValueError(f"Unexpected keyword arguments: {','.join(kwargs)}")
        if isinstance(functions, torch.nn.Sequential):
            functions = children(functions)
        functions = list(functions)
        end = 0
        for start, end in chunks(len(functions), segments):
            input = checkpoint(_run(functions[start:end]), input,
                               use_reentrant=use_reentrant, preserve_rng_state=preserve)
        return _run(functions[end:])(input)

    return checkpoint_sequential
