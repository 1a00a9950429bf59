"""The base of a mutant, torch plus one break: torch's whole checkpoint surface, to re-export with
`from tests.mutants._support.base import *` before overriding the one name that is broken (usually
`checkpoint`). Every optional helper is there, so no feature reads "not provided"."""

from torch.utils.checkpoint import checkpoint, checkpoint_sequential

from conformance.adapters._torch_surface import *  # noqa: F403  (torch's optional helpers, listed once)
from conformance.adapters._torch_surface import __all__ as _helpers

__all__ = ["checkpoint", "checkpoint_sequential", *_helpers]
