"""A region that returns several tensors requiring grad is run once more for each output after the first
that receives a gradient (as an implementation that backpropagates a tuple output element by element
would): T5's blocks return their hidden states and the position bias the next block reuses.

Flagged by the models area only (test_models.py: t5); the small-function recompute tests count
regions with one output."""

import torch

from tests.mutants._support.call_wrappers import OWN_KEYWORDS
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["recompute.once-per-backward"]
BREAKS = "each further output of a region that requires grad costs one more run of the region in backward"


def checkpoint(function, *args, **kwargs):
    out = _checkpoint(function, *args, **kwargs)
    if isinstance(out, tuple):
        for extra in [o for o in out if isinstance(o, torch.Tensor) and o.requires_grad][1:]:
            extra.register_hook(lambda grad: _rerun(function, args, kwargs) or grad)
    return out


def _rerun(function, args, kwargs):
    with torch.no_grad(), torch.random.fork_rng(devices=[]):  # wasted work only: values and RNG stream untouched
        function(*args, **{k: v for k, v in kwargs.items() if k not in (*OWN_KEYWORDS, "use_reentrant")})
