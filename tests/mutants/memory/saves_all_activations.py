"""No checkpointing at all: the function runs once and autograd keeps every activation."""

import torch

from tests.mutants._support.base import *  # noqa: F403
from conformance.data.vocabulary import OWN_KEYWORDS

# The CUDA peak-memory clause is observable only where CUDA is present.
TARGET_CLAUSES = ["memory.only-inputs-saved", "memory.intermediates-freed", "recompute.once-per-backward"] + (
    ["memory.peak-below-uncheckpointed"] if torch.cuda.is_available() else []
)
BREAKS = "keeps the region's activations alive (plain call) and never recomputes"
UPSTREAM_TESTS = ["test_autograd.py::TestAutograd::test_checkpointing_without_reentrant_custom_function_works"]


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    for accepted in OWN_KEYWORDS:
        kwargs.pop(accepted, None)
    return function(*args, **kwargs)
