"""torch's own checkpoint under another name: no CONFORMANCE_ID, no declared deviation. It behaves like
torch everywhere, so it fails exactly where torch does: its SHOULD clause (BatchNorm's running statistics
updated again in the recompute) reads "SHOULD unmet", and its one MUST failure, rrelu's gradient after
early stop, is torch's own bug pytorch/pytorch#193671, which the failure message names."""

from conformance.adapters._torch_surface import *  # noqa: F403  (torch's optional helpers, listed once)
from torch.utils.checkpoint import checkpoint, checkpoint_sequential  # noqa: F401
