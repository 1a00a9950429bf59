"""checkpoint_sequential unpacks an nn.Sequential with .modules() instead of .children(): the
container itself (and any nested submodule) becomes one of the functions run in sequence."""

from tests.mutants._support.sequential_over import sequential_over
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint

TARGET_CLAUSES = ["sequential.same-results"]
BREAKS = "an nn.Sequential is run as [itself, *its layers], so the model runs twice over"
UPSTREAM_TESTS = ["test_utils.py::TestCheckpoint::test_checkpoint"]

checkpoint_sequential = sequential_over(checkpoint, children=lambda sequential: list(sequential.modules()))
