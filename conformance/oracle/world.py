"""What a caller's lifecycle program (conformance/oracle/lifecycle.py) builds its world from: the plain twin of the
API, a tensor subclass that reroutes an operator, context_fn managers that log how they are left, the caller's
saved-tensor hooks that log which arguments they pack, and a meeting point for regions in two threads.

Torch and the standard library only, and names from prelude.py and observe.py: reproducer scripts embed this module
after them.
"""

import contextlib
import contextvars  # noqa: F401  (the programs' ContextVar)
import threading

import torch
from torch.testing._internal.common_subclass import NonWrapperTensor  # noqa: F401  (torch's test zoo, an argument)

from conformance.oracle.prelude import PLAIN
from conformance.oracle.observe import _memory


class _PlainTwin(type(PLAIN)):
    """The un-checkpointed twin of a lifecycle program: checkpoint(f, *args, context_fn=cf) is f(*args) run under
    cf()'s first manager (the docs: "the function ... will be run under the first context manager"); selective
    checkpointing's contexts change nothing there."""

    @staticmethod
    def checkpoint(function, *args, context_fn=None, **kwargs):
        with (context_fn()[0] if context_fn is not None else contextlib.nullcontext()):
            return PLAIN.checkpoint(function, *args, **kwargs)

    @staticmethod
    def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
        return contextlib.nullcontext(), contextlib.nullcontext()

    @staticmethod
    def GraphExecGroup():  # the API's class: one recompute shared changes nothing where none is made
        return contextlib.nullcontext()


PLAIN_TWIN = _PlainTwin()


class Base2(torch.Tensor):
    """A tensor subclass whose exp is base 2: any subclass that reroutes an operator (quantizing, casting, a
    torch-function mode: pytorch/pytorch#147995) makes the function compute something else than on plain tensors."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.Tensor.exp, torch.exp):
            func = torch.exp2
        return super().__torch_function__(func, types, args, kwargs or {})


class Managers:
    """How many of context_fn's managers the running thread is inside: the function, whenever it runs, must be inside
    one (the docs: the forward runs under the first, "its recomputation" under the second: every recompute, a
    retained graph's second included)."""

    def __init__(self):
        self.local = threading.local()

    @property
    def inside(self) -> int:
        return getattr(self.local, "inside", 0)

    def entered(self):
        """A manager counting its holder as inside; it may be entered again after it is left (a recompute manager
        serves every recompute of its call, the docs do not say that context_fn is called again for each)."""
        return _Counted(self)

    def check(self, log, tensor):
        """The function's first line: log a run outside every manager."""
        if not self.inside:
            log.append("the function ran outside context_fn's managers")
        return tensor


class _Counted:
    def __init__(self, managers):
        self.managers = managers

    def __enter__(self):
        self.managers.local.inside = self.managers.inside + 1

    def __exit__(self, *exc):
        self.managers.local.inside -= 1
        return False


class _LoggedForward:
    """context_fn's forward manager, logging its entry and how it is left (the exception's type or None)."""

    def __init__(self, log, label, managers):
        self.log, self.label, self.entered = log, label, managers.entered()

    def __enter__(self):
        self.log.append(f"{self.label}: entered")
        self.entered.__enter__()

    def __exit__(self, exc_type, exc, tb):
        self.entered.__exit__(exc_type, exc, tb)
        self.log.append(f"{self.label}: left with {exc_type.__name__ if exc_type else None}")
        return False


def logged_contexts(log, label, managers):
    """A context_fn: a forward manager that logs into ``log`` (the caller reads it at every step) how it is entered
    and left, and a recompute manager; both counted in ``managers``."""
    return lambda: (_LoggedForward(log, label, managers), managers.entered())


def arguments_packed(arguments, log, label):
    """The caller's saved_tensors_hooks around a forward, logging each pack of one of the region's arguments
    (their memory): checkpoint keeps its arguments for the backward, and autograd packs what it keeps through
    the caller's hooks (torch's test_save_on_cpu_and_checkpoint); the plain run packs the argument its first
    op saves."""
    memories = {_memory(a) for a in arguments} - {None}

    def pack(tensor):
        if _memory(tensor) in memories:
            log.append(f"{label}: an argument packed")
        return tensor

    return torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor)


class Meeting:
    """A barrier that the function waits at only while armed: the forwards of two regions in two threads meet
    there midway, so that they interleave for sure; the recomputes (disarmed by then) pass through."""

    def __init__(self, parties=2, timeout=20.0):
        self.barrier, self.armed = threading.Barrier(parties, timeout=timeout), False

    def __call__(self, tensor):
        if self.armed:
            self.barrier.wait()
        return tensor

    @contextlib.contextmanager
    def held(self):
        self.armed = True
        try:
            yield
        finally:
            self.armed = False


def raised_inside(manager):
    """Enter a manager, raise inside it, catch the exception: what the manager leaves behind is the step's state."""
    try:
        with manager:
            raise KeyError("the caller's block fails")
    except KeyError:
        pass


def with_group(api, thunks):
    """Each thunk's result, all under one GraphExecGroup, made here and dropped after (a later one is another)."""
    with api.GraphExecGroup():
        return [thunk() for thunk in thunks]


def program(source: str):
    """The run(api, record) function a lifecycle program's source defines, with this module's names in scope too."""
    import sys

    from conformance.oracle.program import runnable

    return runnable(source, sys.modules[__name__])
