"""torch's own checkpoint under another name: no declared id, no declared deviation. It behaves like
torch everywhere, so it fails exactly where torch does: its SHOULD clause (BatchNorm's running statistics
updated again in the recompute) reads "SHOULD unmet", and its MUST failures are torch's own bugs, which
the failure messages name: rrelu's gradient after early stop (pytorch/pytorch#193671) and CPU-offload
policies recomputed in eager mode (pytorch/pytorch#185015)."""

from conformance.adapters._torch_surface import *  # noqa: F403  (torch's optional helpers, listed once)
from torch.utils.checkpoint import checkpoint, checkpoint_sequential  # noqa: F401
