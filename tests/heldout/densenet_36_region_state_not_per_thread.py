"""Non-reentrant variant: "the region being forwarded now" is kept in one module-level slot, not per thread. Each
region's forward points the slot at its own frame (and gives back the previous one on exit). The saved-tensor
pack hook files every tensor it is given under the slot's frame, not under the frame of the region that saved it.
Within one thread this is right, nesting included. Two threads whose checkpointed forwards overlap mix their regions,
for example the replicas of nn.DataParallel (one thread each, as in efficient_densenet_pytorch#36), or two threads
each running a region at the same time. pytorch#96764 asks for this thread-safety of checkpoint's bookkeeping. The
tensors one thread's region saves after the other thread has entered its region are recorded under the other
region's frame. Backward then fails: the robbed region recomputes with nothing expected of it (AssertionError,
"Unexpected state"), and the other one finds more tensors than its recompute saves (CheckpointError). torch keeps
the saved-tensor hooks per thread, so both regions are fine there. A single thread is unaffected, and so is the
reentrant variant.

Report: https://github.com/gpleiss/efficient_densenet_pytorch/issues/36 (gpleiss/efficient_densenet_pytorch#36),
https://github.com/pytorch/pytorch/issues/96764 (pytorch/pytorch#96764)
"""

import contextlib
import threading
import weakref

import torch
import torch.utils.checkpoint as _torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

REPORT = "gpleiss/efficient_densenet_pytorch#36"
KIND = "threads"
BREAKS = "non-reentrant: regions forwarded at once in two threads file their saved tensors under one frame"

_Hook = _torch._checkpoint_hook  # torch's saved-tensor hooks of a region's forward
_forwarding = None  # weakref to the frame of the region being forwarded now: BUG, one slot for every thread


def _file_under(frame, x):
    """torch's pack hook, for a frame given at pack time."""
    holder = _torch._Holder()
    frame.weak_holders.append(weakref.ref(holder))
    if frame.metadata_fn is not None:
        with torch.no_grad():
            frame.x_metadatas.append(frame.metadata_fn(x))
    return holder


class _SlotHook(_Hook):
    def __init__(self, frame):
        super().__init__(frame)  # torch's unpack hook (recompute) stays with the region's own frame
        self.frame = weakref.ref(frame)
        self.pack_hook = lambda x: _file_under(_forwarding(), x)

    def __enter__(self):
        global _forwarding
        self.previous, _forwarding = _forwarding, self.frame
        return super().__enter__()

    def __exit__(self, *exc):
        global _forwarding
        if _forwarding is self.frame:
            _forwarding = self.previous
        return super().__exit__(*exc)


@contextlib.contextmanager
def _hooks_of(hook_class):  # like frame_swap.frames_of: torch looks the class up at each call
    _torch._checkpoint_hook = hook_class
    try:
        yield
    finally:
        _torch._checkpoint_hook = _Hook


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    if use_reentrant is not False:
        return _checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    with _hooks_of(_SlotHook):
        return _checkpoint(function, *args, use_reentrant=False, **kwargs)


def witness(api):
    b_inside, a_done = threading.Event(), threading.Event()
    x = {name: torch.full((3,), value, requires_grad=True) for name, value in (("a", 0.5), ("b", 1.5))}
    outs = {}

    def region_a(t):
        b_inside.wait(5)  # B's region has started: both forwards are under way
        return t.sin().cos()

    def region_b(t):
        b_inside.set()
        a_done.wait(5)  # A's region saves its tensors now
        return t.sin().cos()

    def thread_a():
        outs["a"] = api.checkpoint(region_a, x["a"], use_reentrant=False)
        a_done.set()

    def thread_b():
        outs["b"] = api.checkpoint(region_b, x["b"], use_reentrant=False)

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    results = []
    for name in ("a", "b"):
        try:
            outs[name].sum().backward()
            results.append(tuple(round(v, 4) for v in x[name].grad.tolist()))
        except Exception as e:  # noqa: BLE001
            results.append(type(e).__name__)
    return tuple(results)
