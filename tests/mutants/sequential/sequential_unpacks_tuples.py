"""checkpoint_sequential unpacks a tuple (its input, or what a function returns) into several arguments of
the next function, as torch 1.0's did, instead of handing it on whole as nn.Sequential does."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint
from tests.mutants._support.sequential_over import even_chunks

TARGET_CLAUSES = ["sequential.tuple-passed-whole"]
BREAKS = "a tuple between two functions is unpacked into several arguments of the second"


def _arguments(value):
    return value if isinstance(value, tuple) else (value,)


def _run(functions):
    def run(*inputs):
        for function in functions:
            inputs = function(*_arguments(inputs))
        return inputs

    return run


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError(f"Unexpected keyword arguments: {','.join(kwargs)}")
    functions = list(functions.children()) if isinstance(functions, torch.nn.Sequential) else list(functions)
    end = 0
    for start, end in even_chunks(len(functions), segments):
        input = checkpoint(_run(functions[start:end]), *_arguments(input), use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _run(functions[end:])(*_arguments(input))
