"""Returns the function's integer and boolean tensor outputs as floating-point tensors, as a
checkpoint that makes every output differentiable would. The masks, indices and lengths of the
"non-differentiable output" tests flag it, and so do the op sweep's argmax, comparisons, nonzero,
sort indices..."""

import torch
from torch.utils._pytree import tree_map

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["api.forward-value"]
BREAKS = "integer and boolean outputs (indices, masks, counts) come back as floating-point tensors"


def _as_float(value):
    if isinstance(value, torch.Tensor) and not (value.is_floating_point() or value.is_complex()):
        return value.to(torch.get_default_dtype())
    return value


def checkpoint(function, *args, **kwargs):
    return tree_map(_as_float, _checkpoint(function, *args, **kwargs))
