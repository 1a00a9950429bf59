"""checkpoint_sequential kept lenient from the old signature (functions, segments, *inputs; pytorch/pytorch#6526,
torch 1.0): a second input is refused as the docs now ask, but a call without any input is taken as a call on
nothing, and the functions run from no argument instead of the call being refused."""

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint_sequential as _checkpoint_sequential

TARGET_CLAUSES = ["sequential.single-input"]
BREAKS = "a call without an input runs the functions from no argument instead of raising"
UPSTREAM_TESTS = ["test_utils.py::TestCheckpoint::test_checkpoint_sequential_deprecated_no_args"]


def checkpoint_sequential(functions, segments, *inputs, use_reentrant=None, **kwargs):
    if len(inputs) > 1:
        raise TypeError("checkpoint_sequential takes one input")
    if inputs:
        return _checkpoint_sequential(functions, segments, inputs[0], use_reentrant=use_reentrant, **kwargs)
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    output = functions[0]()
    for function in functions[1:]:
        output = function(output)
    return output
