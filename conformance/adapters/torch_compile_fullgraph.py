"""Diagnostic row: torch_compile with ``fullgraph=True`` (see _compiled).

A graph break raises (``torch._dynamo.exc.Unsupported``) instead of falling back to eager Python. A
test that passes in ``torch_compile`` but fails here did not run compiled there, or only in part.
"""

from __future__ import annotations

from conformance.adapters._compiled import (  # noqa: F401
    __version__,
    compiled,
    protocol,
)
from conformance.adapters._torch_surface import *  # noqa: F403  (torch's global switches and helpers apply here too)

NAME = 'torch.compile(backend="aot_eager", fullgraph=True) + torch.utils.checkpoint'
__conformance__ = protocol(NAME)

checkpoint, checkpoint_sequential = compiled("aot_eager", fullgraph=True)
