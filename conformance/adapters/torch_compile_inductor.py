"""torch.utils.checkpoint under ``torch.compile(backend="inductor")`` (see _compiled), on CPU through g++.

``torch._inductor.config.fallback_random = True``: inductor otherwise generates its own random numbers
in its kernels, which differ from eager's stream, and dropout inside the region would differ from the
uncheckpointed eager reference for a reason unrelated to checkpointing. Ops fused into a kernel do not
reach dispatch-mode op counters.
"""

from __future__ import annotations

from conformance.adapters._compiled import (  # noqa: F401
    __version__,
    compiled,
    protocol,
)
from conformance.adapters._torch_surface import *  # noqa: F403  (torch's global switches and helpers apply here too)

NAME = 'torch.compile(backend="inductor", fallback_random) + torch.utils.checkpoint'
__conformance__ = protocol(NAME)


def _eager_random():
    import torch._inductor.config as inductor_config

    inductor_config.fallback_random = True


checkpoint, checkpoint_sequential = compiled("inductor", configure=_eager_random)
