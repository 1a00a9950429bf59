"""A GraphExecGroup that is torch's, and also tells mutants whether any group is active."""

import torch.utils.checkpoint as _torch


class TrackedGraphExecGroup:
    """torch's GraphExecGroup (one torch group per instance, so an instance entered twice stays one group),
    counting the groups entered and not yet left in ``active``."""

    active = 0

    def __init__(self):
        self._group = _torch.GraphExecGroup()

    def __enter__(self):
        self._group.__enter__()  # first: a refused (nested) group is not counted
        TrackedGraphExecGroup.active += 1
        return self

    def __exit__(self, *exc):
        TrackedGraphExecGroup.active -= 1
        return self._group.__exit__(*exc)

    @staticmethod
    def any_active() -> bool:
        return TrackedGraphExecGroup.active > 0
