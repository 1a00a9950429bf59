"""checkpoint_sequential unpacks an nn.Sequential into its leaf modules (``modules()`` walked down to
the modules without children) instead of its children: a block's own forward never runs, so a residual
block loses its skip connection, and the segments are counted over leaves, not children. The
flattening re-wrappers of sequential models get wrong on residual networks (Lyken17/pytorch-memonger#1:
"not work for network with residual structure?"; pytorch/pytorch#19260 on nested Sequentials)."""

from tests.mutants._support.sequential_over import sequential_over
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint

TARGET_CLAUSES = ["sequential.same-results", "sequential.segments"]
BREAKS = "an nn.Sequential of blocks is run as the chain of its leaf modules, not its children"


def _leaf_modules(sequential):
    return [module for module in sequential.modules() if next(module.children(), None) is None]


checkpoint_sequential = sequential_over(checkpoint, children=_leaf_modules)
