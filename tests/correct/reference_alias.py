"""The reference implementation (both variants its own, written from the docs) under another name, so
none of reference_impl's declarations applies: where it differs from torch on what the docs leave open
(BatchNorm's running statistics in the recompute: a SHOULD), the run must still pass."""

from reference_impl import *  # noqa: F403
from reference_impl import checkpoint, checkpoint_sequential  # noqa: F401
