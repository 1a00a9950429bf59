"""What a generated program is written with: the plain twin of the API (PLAIN: the function run directly, checkpoint's own
options dropped), and the helpers its steps call (losses, modules, context managers, threads).

A program (conformance/oracle/program.py writes its source) runs with these names, those of observe.py and compare.py in
scope; reproducer scripts (conformance/oracle/script.py) embed the three modules verbatim, in that order, so this module
imports torch, the standard library and one name of the vocabulary only, whose value the script writes in.
"""

from __future__ import annotations

# What a program's source may use besides these helpers: the standard library's and torch's names below, as before
# the split (a program runs in the union of this module's, observe.py's and compare.py's names).
# ruff: noqa: F401
import contextlib
import enum
import functools  # programs also hand checkpoint functools.partial objects
import gc
import logging
import random
import re
import sys
import threading
import time
import warnings
import weakref
from dataclasses import dataclass, field

import torch
from torch.multiprocessing.reductions import StorageWeakRef

from conformance.data.vocabulary import CHECKPOINT_KEYWORDS  # a reproducer script writes its value in (script.py)


class _Plain:
    """The un-checkpointed program: checkpoint(f, *args) is f(*args); checkpoint's own options are dropped."""

    @staticmethod
    def checkpoint(function, *args, **kwargs):
        return function(*args, **{k: v for k, v in kwargs.items() if k not in CHECKPOINT_KEYWORDS})

    @staticmethod
    def checkpoint_sequential(functions, segments, input, **options):
        for f in functions:
            input = f(input)
        return input

    @staticmethod
    def set_checkpoint_early_stop(enable):
        """Without checkpoint, the API's own switches change nothing."""
        return contextlib.nullcontext()

    @staticmethod
    def set_checkpoint_debug_enabled(enabled):
        return contextlib.nullcontext()


PLAIN = _Plain()


class Halt(Exception):
    """A step raised: the program stops there, as the caller's would."""


def loss_of(output):
    """The sum of every floating tensor in output that requires grad (a constant if none does)."""
    terms = [(t.abs() if t.is_complex() else t).sum() for t in tensors_in(output)
             if t.requires_grad and (t.is_floating_point() or t.is_complex())]
    return sum(terms[1:], terms[0]) if terms else torch.zeros(())


def change_in_place(tensor):
    with torch.no_grad():
        tensor.mul_(2)


def noop_contexts():
    """A context_fn that changes nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def default_device_set(device):
    """torch.set_default_device(device) for the block: the global setter, not the torch.device context."""
    torch.set_default_device(device)
    try:
        yield
    finally:
        torch.set_default_device(None)


def suppressing_contexts():
    """A context_fn whose forward manager swallows a ValueError (checkpoint must still raise it)."""
    return contextlib.suppress(ValueError), contextlib.nullcontext()


class Token:
    """An object of the caller's own, passed as a non-tensor argument (the region may compare it by identity)."""


class Block(torch.nn.Module):
    """A module whose forward runs a function, holding the modules the function uses (a model's block)."""

    def __init__(self, function, **modules):
        super().__init__()
        self.function = function
        for name, module in modules.items():
            self.add_module(name, module)

    def forward(self, *args, **kwargs):
        return self.function(*args, **kwargs)


class Residual(torch.nn.Module):
    """A block whose forward is more than the chain of its layers."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, h):
        return h + self.layer(h)


class Lambda(torch.nn.Module):
    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, h):
        return self.function(h)


def total(output) -> float:
    """The sum of every floating tensor in output, as a number."""
    return float(sum(t.detach().abs().double().sum() for t in tensors_in(output) if t.is_floating_point() or t.is_complex()))


def first_tensor(output):
    return next(t for t in tensors_in(output) if t.is_floating_point() or t.is_complex())


def tensors_in(value):
    """The tensors of an output, in a fixed order (dicts in insertion order)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []


# ------------------------------------------------------- the caller's program around the region (issue 35)

def last_tensor(output):
    """The last floating tensor in output (a subset of the outputs other than first_tensor's where there are several)."""
    return [t for t in tensors_in(output) if t.is_floating_point() or t.is_complex()][-1]


def recover(fault, record):
    """The caller after a failed call: turns the fault off, clears the gradients (as an optimizer's
    zero_grad(set_to_none=True)) and reseeds, so that a second call starts from what the plain run has too
    (where the plain run did not fail, it drew what the failed call did not; the stream the failure left
    was compared at the failing step)."""
    fault.clear()
    for leaf in record.leaves():
        leaf.grad = None
    torch.manual_seed(0)


def in_threads(work, count=2):
    """work(0), ..., work(count - 1), each in its own thread, started together; their results in order.
    The first exception a thread raised is raised here, after every thread has ended."""
    start, results, errors = threading.Barrier(count), [None] * count, [None] * count

    def run(i):
        start.wait()
        try:
            results[i] = work(i)
        except Exception as exc:  # noqa: BLE001  (re-raised in the caller's thread below)
            errors[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for exc in errors:
        if exc is not None:
            raise exc
    return tuple(results)
