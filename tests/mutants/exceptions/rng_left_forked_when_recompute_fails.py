"""When the recompute raises, the global RNG stays at the forward's stashed state: the stash is applied
before the recompute and the caller's stream given back only when the recompute returns (no try/finally
around it), so after a failed backward the caller's next draws replay the forward's."""

import contextlib

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; two names are broken below)
from tests.mutants._support.rng_around import as_is, checkpoint_with_rng

TARGET_CLAUSES = ["exceptions.no-leftover-state"]
BREAKS = "a recompute that raises leaves the global RNG at the forward's stashed state"


@contextlib.contextmanager
def _replaying_until_it_fails(stash):
    caller = torch.get_rng_state()
    torch.set_rng_state(stash)
    try:
        yield
    except Exception as exc:
        if type(exc).__module__.startswith("torch"):  # torch's own early-stop signal: the stream is given back
            torch.set_rng_state(caller)
        raise  # the function's own exception: it is not
    torch.set_rng_state(caller)


checkpoint, checkpoint_sequential = checkpoint_with_rng(as_is, _replaying_until_it_fails)
