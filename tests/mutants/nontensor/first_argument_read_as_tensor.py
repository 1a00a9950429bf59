"""Reads the first argument as a tensor, as Megatron-LM's checkpoint does to remember the shape of the
activation it partitions (``ctx.input_0_shape = args[0].data.shape``): a function whose first argument is
not a tensor (None, a flag, a config object) cannot be checkpointed."""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["nontensor.arguments-pass-through"]
BREAKS = "a non-tensor first argument fails (its .data is read as a tensor's)"


def checkpoint(function, *args, **kwargs):
    input_0_shape = args[0].data.shape  # noqa: F841  (the shape of the activation to partition)
    return _checkpoint(function, *args, **kwargs)
