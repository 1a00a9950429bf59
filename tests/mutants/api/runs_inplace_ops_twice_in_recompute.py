"""Non-reentrant: the recompute runs every in-place (mutating) operator twice, as a recompute that
replays an op log without telling mutations apart would. Random in-place ops (bernoulli_, uniform_)
are left alone: that is the RNG clauses' family. Of the fixed models only dropout mutates an
intermediate (it scales its mask in place), which the rng tests see, while their api.same-gradients
tests do not; the op sweep's rms_norm, nanmean, the embedding losses, ... flag it there."""

import contextlib

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.same-gradients"]
BREAKS = "the non-reentrant recompute runs each in-place operator twice"


class _MutationsTwice(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func._schema.is_mutable and torch.Tag.nondeterministic_seeded not in func.tags:
            func(*args, **kwargs)
        return func(*args, **kwargs)


def _contexts():
    return contextlib.nullcontext(), _MutationsTwice()


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False and "context_fn" not in kwargs:
        kwargs["context_fn"] = _contexts
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
