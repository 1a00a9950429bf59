"""Its non-reentrant checkpoint raises an error whose message is HTML markup, to check that the
report shows it as text (escaped) and never as markup. The reentrant variant is torch's."""

import torch.utils.checkpoint
from torch.utils.checkpoint import CheckpointError, checkpoint_sequential  # noqa: F401
from torch.utils.checkpoint import checkpoint as _checkpoint

MARKUP = "<script>alert(1)</script><b>bold</b> & \"quoted\" 'text'"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is False:
        raise RuntimeError(MARKUP)
    return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


def __getattr__(name):  # the rest of the API (early stop, debug, SAC, ...) is torch's, unchanged
    return getattr(torch.utils.checkpoint, name)
