"""Process-wide overrides of the non-reentrant checkpoint's ``early_stop`` and ``debug`` arguments.

Both are read when a checkpointed forward runs (not at backward), and while set they win over
the argument passed to ``checkpoint``. ``None`` means "no override: the argument decides".
"""

from __future__ import annotations

import contextlib

_overrides = {"early_stop": None, "debug": None}


@contextlib.contextmanager
def _override(name, value):
    previous, _overrides[name] = _overrides[name], value
    try:
        yield
    finally:
        _overrides[name] = previous


def set_checkpoint_early_stop(enable: bool):
    """Context manager: whether non-reentrant checkpoints run inside it stop recomputing early.

    Only needs to be active around the forward; it overrides the ``early_stop`` argument.
    """
    return _override("early_stop", enable)


def set_checkpoint_debug_enabled(enabled: bool | None):
    """Context manager: force ``debug`` on (True) or off (False) for checkpoints run inside it.

    ``None`` defers to each checkpoint's ``debug`` argument.
    """
    return _override("debug", enabled)


def resolve(name: str, argument: bool) -> bool:
    """The effective setting: the innermost active override, else the call's argument."""
    override = _overrides[name]
    return bool(argument if override is None else override)
