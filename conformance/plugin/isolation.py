"""Test isolation: global state an implementation leaves behind fails the test that leaked it, once.

A checkpoint implementation that leaks process-wide state (saved-tensor hooks left on the stack after
a failed forward, a dispatch mode left pushed, grad mode or autocast switched off, an early-stop or debug override left set) would
otherwise break every later, unrelated test: torch 2.6 fails ~180 tests of one run from one such leak.
After each conformance test's call this module compares that state with what it was before the call.
A difference is restored at once (so the next test starts clean) and becomes the failure of the test
that caused it, under clause ``exceptions.no-leftover-state``.

Registered by conformance/plugin/__init__.py.
"""

from __future__ import annotations

import gc
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import pytest
import torch

from conformance.data import facts

LEFTOVER_CLAUSE = "exceptions.no-leftover-state"

# Module-level checkpoint switches (set_checkpoint_early_stop / set_checkpoint_debug_enabled) of the
# implementations this harness knows, read only when their module is already imported.
SWITCHES = (
    ("torch.utils.checkpoint", "_enable_checkpoint_early_stop"),
    ("torch.utils.checkpoint", "_checkpoint_debug_enabled"),
    ("reference_impl.switches", "_overrides"),
)
MAX_LEAKED_HOOKS = 64  # bound on how many leaked saved-tensor hook pairs are popped


class LeftoverState(AssertionError):
    """The test's call left process-wide state changed."""


@dataclass(frozen=True)
class Probe:
    name: str
    read: Callable[[], Any]
    restore: Callable[[Any], None]


class _HookDepth:
    """Counts saved-tensor hook pairs pushed minus popped, for torch releases (before 2.7) that cannot
    report the top of the stack: the push and pop functions are wrapped once, at import."""

    def __init__(self, autograd):
        self.depth = 0
        push, pop = autograd._push_saved_tensors_default_hooks, autograd._pop_saved_tensors_default_hooks

        def counted_push(*args):
            push(*args)
            self.depth += 1

        def counted_pop():
            pop()
            self.depth -= 1

        autograd._push_saved_tensors_default_hooks, autograd._pop_saved_tensors_default_hooks = counted_push, counted_pop


_AUTOGRAD = torch._C._autograd
_DEPTH = None if hasattr(_AUTOGRAD, "_top_saved_tensors_default_hooks") else _HookDepth(_AUTOGRAD)


def _top_hooks():
    """The top (pack, unpack) pair of the stack (None: empty), or the stack's depth on older torch."""
    return _AUTOGRAD._top_saved_tensors_default_hooks(False) if _DEPTH is None else _DEPTH.depth


def _restore_hooks(top_before) -> None:
    # Popped from outside, hooks that their owner pops later are popped twice: a pop on an empty stack,
    # which torch answers with an internal assert. So let owners that defer their pop settle first: a
    # leaked checkpoint context (a generator kept alive by a saved exception) pops its hooks when it is
    # collected, and RETURNN's scope when the next saved-tensor hooks scope is entered or left. Then pop
    # what is still left above the old top.
    gc.collect()
    _enter_and_leave_a_hooks_scope()
    for _ in range(MAX_LEAKED_HOOKS):
        if _top_hooks() == top_before:
            return
        _AUTOGRAD._pop_saved_tensors_default_hooks()


def _enter_and_leave_a_hooks_scope() -> None:
    """A no-op ``saved_tensors_hooks`` scope: where the implementation patched the scope's enter or exit,
    its own bookkeeping runs. What that raises is the implementation's (RETURNN's exit, called after its
    own deferred exit restored the methods, raises 'saved_tensors_hooks __exit__ mismatch' and leaves this
    scope's pair pushed: the caller pops it with the rest)."""
    try:
        with torch.autograd.graph.saved_tensors_hooks(_same, _same):
            pass
    except Exception:  # noqa: BLE001 - the leftover is reported by the caller; this only settles it
        pass


def _same(tensor):
    return tensor


def _dispatch_modes() -> int:
    """How many TorchDispatchModes are pushed (torch's Python dispatch stack)."""
    return torch._C._len_torch_dispatch_stack()


def _restore_dispatch_modes(depth: int) -> None:
    # A mode left pushed (its __exit__ never ran: RETURNN's scope when its __enter__ raised after pushing its
    # recording mode) intercepts every later op; stacked, they end in a recursion deep enough to crash.
    from torch.utils._python_dispatch import _pop_mode

    while _dispatch_modes() > depth:
        _pop_mode()


def _restore_hooks_enabled(enabled: bool) -> None:
    if enabled:
        torch._C._autograd._saved_tensors_hooks_enable()
    else:
        torch._C._autograd._saved_tensors_hooks_disable("disabled before the test (restored by conformance.plugin.isolation)")


def _switch_probe(module: str, attribute: str) -> Probe:
    def read():
        owner = sys.modules.get(module)
        value = getattr(owner, attribute, None)
        return dict(value) if isinstance(value, dict) else value

    def restore(value):
        owner = sys.modules.get(module)
        if owner is not None and hasattr(owner, attribute):
            setattr(owner, attribute, dict(value) if isinstance(value, dict) else value)

    return Probe(f"{module}.{attribute}", read, restore)


def _autocast_probes(device: str) -> list[Probe]:
    return [
        Probe(f"autocast enabled ({device})", lambda: torch.is_autocast_enabled(device),
              lambda v: torch.set_autocast_enabled(device, v)),
        Probe(f"autocast dtype ({device})", lambda: torch.get_autocast_dtype(device),
              lambda v: torch.set_autocast_dtype(device, v)),
    ]


PROBES = [
    Probe("saved-tensor hooks stack (top pair, or depth)", _top_hooks, _restore_hooks),
    Probe("saved-tensor hooks enabled", torch._C._autograd._saved_tensors_hooks_is_enabled, _restore_hooks_enabled),
    Probe("TorchDispatchModes pushed", _dispatch_modes, _restore_dispatch_modes),
    Probe("grad mode", torch.is_grad_enabled, torch.set_grad_enabled),
    Probe("anomaly detection", torch.is_anomaly_enabled, torch.set_anomaly_enabled),
    Probe("default dtype", torch.get_default_dtype, torch.set_default_dtype),
    Probe("default device", torch.get_default_device, torch.set_default_device),
    *_autocast_probes("cpu"),
    *_autocast_probes("cuda"),
    *(_switch_probe(module, attribute) for module, attribute in SWITCHES),
]


def snapshot() -> dict[str, Any]:
    return {probe.name: probe.read() for probe in PROBES}


def restore_changes(before: dict[str, Any], failure: BaseException | None = None) -> list[str]:
    """Restore every probed state that differs from ``before``; describe each difference (as it was
    when the call returned, while ``failure``, the exception it raised, if any, was still alive)."""
    changed = [f"{probe.name}: {_show(before[probe.name])} before, {_show(now)} after"
               for probe in PROBES if (now := probe.read()) != before[probe.name]]
    if changed and failure is not None:
        _release_frames(failure)
    for probe in PROBES:
        if probe.read() != before[probe.name]:
            probe.restore(before[probe.name])
    return changed


def _release_frames(failure: BaseException) -> None:
    """Let go of what the failure's finished frames hold, in it and the exceptions chained to it.

    A checkpoint context suspended in one of them (torch 2.6's non-reentrant generator, kept alive by
    the exception) then closes and pops its own saved-tensor hooks. Popped from outside instead, they
    would be popped again whenever the exception is let go of (pytest keeps the last failure until the
    next one): a pop on an empty stack, which torch answers with an internal assert.
    """
    pending, seen = [failure], set()
    while pending:
        error = pending.pop()
        if error is None or id(error) in seen:
            continue
        seen.add(id(error))
        traceback.clear_frames(error.__traceback__)  # frames still executing (the hook's own) are skipped
        pending += [error.__cause__, error.__context__]
    gc.collect()


def _show(value) -> str:
    if isinstance(value, tuple) and len(value) == 2 and all(callable(v) for v in value):
        return "a (pack, unpack) pair"
    return repr(value)


def _charge_leftover_clause(item, test_failed: bool) -> None:
    """Charge the failure to the leftover-state clause: instead of the test's own clauses when the test
    itself passed, beside them when it failed on its own too."""
    test = facts.read(item)
    if test is not None:
        facts.charge(item, dict.fromkeys([*test.clauses, LEFTOVER_CLAUSE]) if test_failed else [LEFTOVER_CLAUSE])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if facts.read(item) is None:  # not a conformance test
        return (yield)
    before = snapshot()
    try:
        result = yield
    except BaseException as failure:
        if restore_changes(before, failure):
            _charge_leftover_clause(item, test_failed=True)
        raise
    changed = restore_changes(before)
    if changed:
        _charge_leftover_clause(item, test_failed=False)
        raise LeftoverState(
            f"[{LEFTOVER_CLAUSE}] the test passed but left global state behind (restored before the next "
            f"test): " + "; ".join(changed)
        )
    return result
