"""The public entry points: argument handling, then dispatch to one of the two variants."""

from __future__ import annotations

import warnings

from reference_impl import non_reentrant, reentrant, sequential
from reference_impl.non_reentrant import noop_context_fn


def _use_reentrant_default(where: str, stacklevel: int) -> bool:
    warnings.warn(
        f"{where}: the use_reentrant parameter should be passed explicitly. use_reentrant=False is "
        "recommended; pass use_reentrant=True to keep the current default behavior. See the "
        "documentation for the differences between the two variants.",
        UserWarning,
        stacklevel=stacklevel + 1,
    )
    return True


def _reject_unexpected(kwargs):
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True, **kwargs):
    """Run ``function(*args, **kwargs)`` without keeping its intermediate tensors; recompute them in backward.

    Keyword arguments: ``preserve_rng_state`` (default True) replays the forward's random draws in
    the recompute. ``use_reentrant`` picks the variant and should be passed explicitly (if omitted:
    a warning, then the reentrant variant). ``context_fn``, ``determinism_check``, ``debug`` and
    ``early_stop`` apply to the non-reentrant variant; the reentrant one rejects a non-default
    ``context_fn``, ``debug=True`` and any other keyword argument. Returns what ``function`` returns.
    """
    if use_reentrant is None:
        use_reentrant = _use_reentrant_default("checkpoint", stacklevel=2)
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        _reject_unexpected(kwargs)
        return reentrant.checkpoint(function, args, preserve_rng_state)
    return non_reentrant.checkpoint(
        function, args, kwargs,
        preserve_rng_state=preserve_rng_state, context_fn=context_fn,
        determinism_check=determinism_check, debug=debug, early_stop=early_stop,
    )


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Checkpoint an ``nn.Sequential`` (or list of functions) in ``segments`` chunks; the last runs plainly.

    Only ``preserve_rng_state`` is accepted as a keyword argument; it applies to every chunk.
    """
    if use_reentrant is None:
        use_reentrant = _use_reentrant_default("checkpoint_sequential", stacklevel=2)
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    _reject_unexpected(kwargs)
    return sequential.checkpoint_sequential(checkpoint, functions, segments, input, use_reentrant, preserve_rng_state)
