"""torch.utils.checkpoint under ``torch.compile(backend="aot_eager")`` (see _compiled).

Dynamo traces the region and AOTAutograd builds its joint forward/backward graphs, run without
generating kernels. Graph breaks fall back to eager Python, as users get by default; the
``torch_compile_fullgraph`` row shows which tests pass only through such fallbacks.
"""

from __future__ import annotations

from conformance.adapters._compiled import (  # noqa: F401
    __version__,
    compiled,
    protocol,
)
from conformance.adapters._torch_surface import *  # noqa: F403  (torch's global switches and helpers apply here too)

NAME = 'torch.compile(backend="aot_eager") + torch.utils.checkpoint'
__conformance__ = protocol(NAME)

checkpoint, checkpoint_sequential = compiled("aot_eager")
