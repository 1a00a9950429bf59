"""checkpoint_sequential unpacks an nn.Sequential with .modules() instead of .children(): the
container itself (and any nested submodule) becomes one of the functions run in sequence."""

from tests.mutants._sequential_over import sequential_over
from tests.mutants._torch_based import CheckpointError, checkpoint  # noqa: F401

TARGET_CLAUSES = ["sequential.same-results"]
BREAKS = "an nn.Sequential is run as [itself, *its layers], so the model runs twice over"

checkpoint_sequential = sequential_over(checkpoint, children=lambda sequential: list(sequential.modules()))
