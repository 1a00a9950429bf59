"""Non-reentrant checkpoint (``use_reentrant=False``), built on saved-tensor hooks.

Forward. The function runs with autograd recording as usual, but under ``saved_tensors_hooks``
whose pack hook hands autograd a small ``_Slot`` instead of each tensor it wants to save. The
tensors themselves are then free to die as soon as the forward is done with them; only the
inputs are kept, by ``_SaveInputs``.

Backward. The first unpack of any slot in a backward pass (one autograd graph task) re-runs the
function on the saved inputs, under recompute hooks that put the n-th tensor the recompute saves
into the forward's n-th slot (if autograd still holds that slot). Each unpack then takes its tensor
out of its slot, so a recomputed tensor lives no longer than autograd needs it. Autograd gives an
unpacked tensor the forward graph's edges, so the recomputed graph is never used for gradients:
it is dropped at once, and higher-order gradients flow through the forward graph.

Early stop. Once the recompute has refilled every slot, the rest of the function is not needed,
but it may not stop at the last save itself: an op can save a tensor and only then write into it
(``rrelu`` saves its noise buffer, then fills it in place), and stopping there hands backward a
tensor the recompute never finished writing (pytorch/pytorch#193671). Only an operator that writes
one of its arguments can do that (its schema says so). So once every slot is refilled, the recompute
stops before the next aten operator, or right after it if it writes an argument: that spares the
outputs nothing would use (the product of dropout's input and mask, computed after mul saved them).
Watching aten operators costs time, so it is done only for the torch calls made while at most
``_WATCHED_SLOTS`` slots are left (``outside_state.py``: the recompute's modes). A call that refills
more than that at once stops when it returns; a save made outside any torch call (a custom
Function's ``save_for_backward``, packed after its forward has returned) stops the recompute at once.

GraphExecGroup (``groups.py``): under a group, the recompute is keyed by the group instead of the
backward pass. Module state: the recompute writes no state from outside the region
(``outside_state.py``).
"""

from __future__ import annotations

import contextlib
import itertools
import weakref

import torch
from torch.autograd.graph import saved_tensors_hooks

from reference_impl import groups, switches
from reference_impl.debug import OpLog, explain
from reference_impl.outside_state import AtenOps, OutsideStateKept, written_arguments
from reference_impl.rng import ForwardState


class CheckpointError(RuntimeError):
    """The recompute did not reproduce what the forward saved, or saved tensors were misused."""


def noop_context_fn():
    """The default ``context_fn``: run the forward and the recompute under no extra context."""
    return contextlib.nullcontext(), contextlib.nullcontext()


DETERMINISM_CHECKS = ("default", "none")
DEBUG_TIP = (
    "\nTip: to see the operators run during the forward and the recompute, pass debug=True to "
    "checkpoint, or run the forward under set_checkpoint_debug_enabled(True)."
)

# Backward passes are told apart by autograd's graph task id (or their GraphExecGroup); a saved tensor
# read outside any backward (e.g. ``grad_fn._saved_self``) has none, so each such read gets a fresh id.
_reads_outside_backward = itertools.count(-2, -1)


class _StopRecomputation(Exception):
    """Early stop: raised through the user's function once every needed tensor is recomputed."""


class _Slot:
    """What autograd saves in place of one tensor the forward saved; the recompute refills it."""

    __slots__ = ("tensors", "__weakref__")

    def __init__(self):
        self.tensors = {}  # graph task id (or GraphExecGroup) -> recomputed tensor, until unpacked


class _SaveInputs(torch.autograd.Function):
    """Keeps the tensor inputs as saved tensors of a node of their own, not by plain reference.

    Saved, they get autograd's version check (an input modified in place before backward is an
    error) and they pass through the caller's saved-tensor hooks, so an enclosing checkpoint
    recomputes them instead of keeping them alive. The node is off the output's graph; the frame
    only reads its saved tensors, so no backward is defined.
    """

    @staticmethod
    def forward(ctx, anchor, *tensors):
        ctx.save_for_backward(*tensors)
        return torch.empty(0)


# Requires grad, so that _SaveInputs records a node even when no input requires grad.
_ANCHOR = torch.empty(0, requires_grad=True)


def _metadata(tensor):
    return tensor.shape, tensor.dtype, tensor.device


def _describe(metadata):
    shape, dtype, device = metadata
    return f"shape={tuple(shape)}, dtype={dtype}, device={device}"


class _Frame:
    """One checkpointed call: what its recompute needs, and the slots its forward gave autograd."""

    def __init__(self, function, args, kwargs, state, recompute_ctx, *, early_stop, check_metadata, debug):
        self.function, self.kwargs, self.state, self.recompute_ctx = function, kwargs, state, recompute_ctx
        self.early_stop = early_stop
        self.forward_ops = OpLog() if debug else None
        self.tensor_positions = [i for i, arg in enumerate(args) if isinstance(arg, torch.Tensor)]
        self.args = [None if isinstance(arg, torch.Tensor) else arg for arg in args]
        self.saved_inputs = _SaveInputs.apply(_ANCHOR, *(args[i] for i in self.tensor_positions))
        self.slots = []  # weak references to the slot of each tensor the forward saved, in order
        self.metadata = [] if check_metadata else None  # (shape, dtype, device) of each
        self.recomputed_in = set()  # graph tasks for which the slots were refilled
        self.forward_done = False

    # Hooks of the forward.
    def pack(self, tensor):
        slot = _Slot()
        self.slots.append(weakref.ref(slot))
        if self.metadata is not None:
            self.metadata.append(_metadata(tensor))
        return slot

    def unpack(self, slot):
        task = torch._C._current_graph_task_id()
        if task == -1:
            task = next(_reads_outside_backward)
            self.recompute(task, only=slot)
        else:
            task = groups.active_group() or task
            if task not in self.recomputed_in:
                self.recompute(task)
                self.recomputed_in.add(task)
        try:
            return slot.tensors.pop(task)
        except KeyError:
            if isinstance(task, groups.GraphExecGroup):
                raise CheckpointError(
                    "Two backward calls under one GraphExecGroup used the same saved activation; backward "
                    "calls under a GraphExecGroup must run over non-overlapping parts of the graph.") from None
            raise CheckpointError(
                "Unpack is being triggered for a tensor that was already unpacked once in this backward "
                "pass. If you read ctx.saved_tensors in a custom Function's backward, read it only once."
            ) from None

    def recompute(self, task, only=None):
        """Re-run the function as the forward ran it, refilling the slots for this graph task."""
        run = _Recomputation(self, task, only)
        args = list(self.args)
        for position, tensor in zip(self.tensor_positions, self.saved_inputs.grad_fn.saved_tensors):
            args[position] = tensor
        ops = _EarlyStop(run) if self.early_stop else OutsideStateKept()
        try:
            with saved_tensors_hooks(run.pack, run.unpack), torch.enable_grad(), self.state.replayed():
                with self.recompute_ctx, run.ops or contextlib.nullcontext(), ops:
                    self.function(*args, **self.kwargs)
        except _StopRecomputation:
            pass
        else:
            # Also reached when the function swallowed _StopRecomputation: harmless if every slot was
            # refilled by then (a later save fails the "more tensors" check in pack).
            if run.count < len(self.slots):
                raise self.error(
                    "A different number of tensors was saved during the original forward and recomputation.\n"
                    f"Number of tensors saved during forward: {len(self.slots)}\n"
                    f"Number of tensors saved during recomputation: {run.count}.",
                    run.ops,
                )
        if run.mismatches:
            details = "".join(
                f"tensor at position {i}:\nsaved metadata: {_describe(self.metadata[i])}\n"
                f"recomputed metadata: {_describe(found)}\n"
                for i, found in run.mismatches
            )
            raise self.error(
                "Recomputed values for the following tensors have different metadata than during the "
                f"forward pass.\n{details}",
                run.ops,
            )

    def error(self, message, recompute_ops):
        if self.forward_ops is None:
            return CheckpointError(f"checkpoint: {message}{DEBUG_TIP}")
        return CheckpointError(explain(message, self.forward_ops, recompute_ops))


class _Recomputation:
    """The hooks of one recompute: the n-th tensor it saves refills the forward's n-th slot."""

    def __init__(self, frame, task, only):
        self.frame, self.task, self.only = frame, task, only
        self.count = 0
        self.refilled = False  # every slot refilled: stop at the next operator (see the module docstring)
        self.in_torch_call = False
        self.mismatches = []  # (position, recomputed metadata)
        self.ops = OpLog() if frame.forward_ops is not None else None

    def pack(self, tensor):
        frame, index = self.frame, self.count
        self.count += 1
        # Detached: a recomputed tensor that kept its grad_fn would keep the recomputed graph alive,
        # and autograd reattaches the forward graph's edges on unpack anyway.
        tensor = tensor.detach() if tensor.requires_grad else tensor
        if index >= len(frame.slots):
            if frame.forward_done:
                raise frame.error("trying to save more tensors during recomputation than during the "
                                  "original forward pass.", self.ops)
            return tensor  # a backward inside the still-running forward: these saves have no slot yet
        if frame.metadata is not None and _metadata(tensor) != frame.metadata[index]:
            self.mismatches.append((index, _metadata(tensor)))
        slot = frame.slots[index]()  # None: autograd already used and freed that saved tensor
        if slot is not None and (self.only is None or slot is self.only):
            slot.tensors[self.task] = tensor
        if frame.early_stop and self.count == len(frame.slots):
            self.refilled = True
            if not self.in_torch_call:
                raise _StopRecomputation
        return tensor

    @staticmethod
    def unpack(tensor):  # the recomputed graph's own saved tensors (autograd inside the function)
        return tensor


_WATCHED_SLOTS = 2  # the last torch calls, those made while at most this many slots are left


class _EarlyStop(OutsideStateKept):
    """The recompute's torch-call mode, with early stop (see the module docstring)."""

    def __init__(self, run):
        self.run = run
        super().__init__()

    def watcher(self):
        return _StoppingAtenOps(self.created, self.run)

    def watch(self, inputs):
        return len(self.run.frame.slots) - self.run.count <= _WATCHED_SLOTS or super().watch(inputs)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.run.in_torch_call = True
        try:
            out = super().__torch_function__(func, types, args, kwargs)
        finally:
            self.run.in_torch_call = False
        if self.run.refilled:
            raise _StopRecomputation
        return out


class _StoppingAtenOps(AtenOps):
    """The aten operators of a watched call, with early stop between them."""

    def __init__(self, created, run):
        super().__init__(created)
        self.run = run

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self.run.refilled and not written_arguments(func):
            raise _StopRecomputation
        out = super().__torch_dispatch__(func, types, args, kwargs)
        if self.run.refilled:  # it wrote an argument it may have saved (rrelu's noise): now complete
            raise _StopRecomputation
        return out


def checkpoint(function, args, kwargs, *, preserve_rng_state, context_fn, determinism_check, debug, early_stop):
    if determinism_check not in DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(DETERMINISM_CHECKS)}, but got {determinism_check!r}")
    debug = switches.resolve("debug", debug)
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with a non-default context_fn")
    forward_ctx, recompute_ctx = context_fn()
    if not torch.is_grad_enabled():
        return function(*args, **kwargs)  # nothing will be saved for backward: nothing to recompute

    state = ForwardState(args, kwargs, preserve_rng_state)
    frame = _Frame(
        function, args, kwargs, state, recompute_ctx,
        early_stop=switches.resolve("early_stop", early_stop),
        check_metadata=determinism_check == "default",
        debug=debug,
    )
    with saved_tensors_hooks(frame.pack, frame.unpack), frame.forward_ops or contextlib.nullcontext():
        with forward_ctx:
            outputs = function(*args, **kwargs)
            frame.forward_done = True  # still False below: forward_ctx swallowed the function's exception
    if not frame.forward_done:
        raise RuntimeError(
            "checkpoint: the forward context from context_fn suppressed an exception raised by the "
            "function; checkpoint has no output to return for a failed forward."
        )
    if state.rng is not None and state.rng.device_initialized_since():
        raise RuntimeError(
            "checkpoint: the device was initialized during the checkpointed forward, so its random state "
            "could not be stashed and the recompute could not replay it."
        )
    return outputs
