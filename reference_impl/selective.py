"""Selective activation checkpointing: a policy picks, operator by operator, which outputs to keep.

Implements the docstrings of torch 2.13:

- ``create_selective_checkpoint_contexts``: "Use this with `torch.utils.checkpoint.checkpoint` to
  control which operations are recomputed during the backward pass." It takes a policy function
  ("accept a SelectiveCheckpointContext, the OpOverload, args and kwargs to the op, and return a
  CheckpointPolicy") or a list of operations, "equivalent to a policy returning
  `CheckpointPolicy.MUST_SAVE` for the specified operations and `CheckpointPolicy.PREFER_RECOMPUTE`
  for all other operations", and returns "a tuple of two context managers" (a ``context_fn``: one
  for the forward, one for the recompute). ``allow_cache_entry_mutation``: "By default, an error is
  raised if any tensors cached by selective activation checkpoint are mutated in order to ensure
  correctness. If set to `True`, this check is disabled."
- ``CheckpointPolicy``: "{MUST,PREFER}_SAVE: The operation's output will be saved during the forward
  pass and will not be recomputed during the backward pass"; "{MUST,PREFER}_RECOMPUTE: [...] will not
  be saved during the forward pass and will be recomputed"; "{MUST,PREFER}_CPU_OFFLOAD: [...] will be
  saved during the forward pass, offloaded to CPU, and reloaded to GPU during the backward pass".
  PREFER_* may be "overridden by other subsystems like `torch.compile`"; in eager mode none does.
- ``SelectiveCheckpointContext``: "The policy function is only called during the forward pass. During
  recomputation, cached values are retrieved by index, so ``is_recompute`` is deprecated and always
  ``False``."

How. The two context managers are dispatch modes over one cache. In the forward, each aten operator
runs, then the policy is asked about it; an output to save goes into the cache under the operator and
its call index (a CPU copy, for an offload policy), with its version counter. In the recompute, the
n-th call of an operator whose n-th output is cached returns it (reloaded to its device) instead of
running. An entry is handed out once and then dropped, so the cache holds no memory past the
recompute that used it; a later recompute (a second backward with retain_graph) recomputes it.

Random operators: the forward also records the generator's state after a saved random operator, and
the recompute, which skips it, sets that state, so the random operators after it draw what they drew
in the forward. Operators whose output aliases an argument (views, in-place operators) allocate
nothing to save: they are always re-run and not shown to the policy.
"""

from __future__ import annotations

import enum
import functools
from collections import defaultdict

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map_only

from reference_impl.outside_state import returns_alias


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an operator's output (see the module docstring)."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVED = {CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE}
_OFFLOADED = {CheckpointPolicy.MUST_CPU_OFFLOAD, CheckpointPolicy.PREFER_CPU_OFFLOAD}


class SelectiveCheckpointContext:
    """What the policy function is told about the call: only ever called in the forward."""

    def __init__(self, *, is_recompute: bool):
        self.is_recompute = is_recompute


class _Stored:
    """One cached output tensor: kept as it is, or copied to the CPU (offloaded).

    An output kept as it is is the very tensor autograd hands the function, until the forward ends:
    a detached alias shares its version counter (which tells of a mutation) only if made above
    autograd, which a dispatch mode is not; ``detach`` then swaps it for one, made outside the mode.
    """

    __slots__ = ("tensor", "device", "version")

    def __init__(self, tensor, offload):
        self.device, self.tensor = tensor.device, tensor
        if offload and tensor.device.type != "cpu":
            self.tensor = tensor.to("cpu", non_blocking=True)  # a copy: nothing else can change it
        self.version = self.tensor._version

    def detach(self):
        self.tensor = self.tensor.detach()

    def load(self, check_mutation):
        if check_mutation and self.tensor._version != self.version:
            raise RuntimeError(
                "Tensor cached during selective activation checkpoint has been mutated after it was "
                "saved; pass allow_cache_entry_mutation=True to create_selective_checkpoint_contexts "
                "to allow it.")
        return self.tensor.to(self.device, non_blocking=True)  # the tensor itself where it already is


@functools.cache
def _is_random(func) -> bool:
    return torch.Tag.nondeterministic_seeded in func.tags


def _generator(func, kwargs, output):
    """The generator a random operator drew from, or None."""
    if not _is_random(func):
        return None
    if kwargs.get("generator") is not None:
        return kwargs["generator"]
    device = next((t.device for t in torch.utils._pytree.tree_leaves(output) if isinstance(t, torch.Tensor)), None)
    if device is None or device.type == "cpu":
        return torch.default_generator
    return torch.cuda.default_generators[device.index or 0] if device.type == "cuda" else None


class _Entry:
    """A saved operator call: its output, and the generator state after it for random operators."""

    def __init__(self, func, kwargs, output, offload):
        if isinstance(output, torch.Tensor):  # most operators: no need to walk a structure
            self.output = _Stored(output, offload)
        else:
            self.output = tree_map_only(torch.Tensor, lambda t: _Stored(t, offload), output)
        self.generator = _generator(func, kwargs, output)
        self.generator_state = self.generator.get_state() if self.generator is not None else None


class _Cache:
    def __init__(self, policy, allow_mutation):
        self.policy, self.check_mutation = policy, not allow_mutation
        self.entries = defaultdict(dict)  # operator -> call index -> _Entry


class _SaveOutputs(TorchDispatchMode):
    """The forward's mode: asks the policy about each operator and caches the outputs to keep."""

    def __init__(self, cache):
        super().__init__()
        self.cache, self.calls = cache, defaultdict(int)
        self.context = SelectiveCheckpointContext(is_recompute=False)

    def __exit__(self, *exc):
        result = super().__exit__(*exc)
        with torch._C._DisableTorchDispatch():  # an enclosing recompute's mode has no part in it
            for per_index in self.cache.entries.values():
                for entry in per_index.values():
                    tree_map_only(_Stored, _Stored.detach, entry.output)  # _Stored is a pytree leaf
        return result

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if returns_alias(func):
            return out
        index, self.calls[func] = self.calls[func], self.calls[func] + 1
        policy = self.cache.policy(self.context, func, *args, **kwargs)
        if isinstance(policy, bool):  # True: save, False: recompute
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        if policy in _SAVED or policy in _OFFLOADED:
            self.cache.entries[func][index] = _Entry(func, kwargs, out, offload=policy in _OFFLOADED)
        return out


class _ReuseOutputs(TorchDispatchMode):
    """The recompute's mode: the n-th call of an operator returns its cached n-th output, if any."""

    def __init__(self, cache):
        super().__init__()
        self.cache, self.calls = cache, defaultdict(int)

    def __enter__(self):
        self.calls.clear()  # each recompute counts the calls from the start
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if returns_alias(func):
            return func(*args, **(kwargs or {}))
        index, self.calls[func] = self.calls[func], self.calls[func] + 1
        entry = self.cache.entries[func].pop(index, None) if func in self.cache.entries else None
        if entry is None:
            return func(*args, **(kwargs or {}))
        if entry.generator is not None:
            entry.generator.set_state(entry.generator_state)
        if isinstance(entry.output, _Stored):
            return entry.output.load(self.cache.check_mutation)
        return tree_map_only(_Stored, lambda stored: stored.load(self.cache.check_mutation), entry.output)


def _policy_from_list(ops):
    for op in ops:
        if not isinstance(op, torch._ops.OpOverload):
            raise ValueError(
                f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. Name an "
                "overload, e.g. torch.ops.aten.mm.default rather than torch.ops.aten.mm.")
    listed = set(ops)

    def policy(ctx, op, *args, **kwargs):
        return CheckpointPolicy.MUST_SAVE if op in listed else CheckpointPolicy.PREFER_RECOMPUTE

    return policy


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The ``context_fn`` pair (forward, recompute) of selective checkpointing (see the module docstring)."""
    if isinstance(policy_fn_or_list, list):
        policy = _policy_from_list(policy_fn_or_list)
    elif callable(policy_fn_or_list):
        policy = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    cache = _Cache(policy, allow_cache_entry_mutation)
    return _SaveOutputs(cache), _ReuseOutputs(cache)
