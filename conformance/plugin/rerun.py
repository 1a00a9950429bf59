"""A failing test, run once more with its random draws fixed (conformance/testing/draws.py): if it then passes, its
failure was the random draws' doing, whatever showed it (gradients, the models' losses, a recompute's
CheckpointError on metadata the draws decide). Its cause becomes the RNG's (observable ``rng``): one bug of the
RNG replay reads as one cause on the implementation page ("one cause, N tests"), not as one per area whose tests
happen to draw (issue 34). A difference stays charged to the test's own clause, whose observable did differ and
by which ``--clause`` selects it (the oracle, whose programs mix features, charges each difference itself); an
exception (a recompute's CheckpointError) kept the test from reading its observable at all: it is charged to
``rng.same-gradients``, the clause of what the recompute's draws decide.

Not run again: a test that passed or skipped, a failure whose causes are already the RNG's, a test of an
implementation that says its draws cannot be fixed (``"fixed_draws": False`` in its ``__conformance__``: the compiled rows), a test marked
``charges_its_draws`` (the oracle: it re-runs each program without its random ops itself, difference by
difference), and a failure with an exception whose signature (conformance/data/causes.py) a re-run has already shown
not to be the draws' (an implementation that raises one error everywhere is re-run once, not 2,000 times). A
re-run in which no random op ran says nothing of draws: the failure keeps its cause. Distributed ranks fix their draws
too, each salted by its rank (equal data on every rank would hide a bug of the gradients' reduction). What fixed draws
cannot tell apart (conformance/testing/draws.py: two draws of one op from equal arguments) reads as the RNG's. The re-run fills
uninitialized memory, so that a read of memory nobody wrote cannot pass it by chance.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
import torch
import torch.utils.deterministic

from conformance.testing import draws
from conformance.data import facts
from conformance.data.causes import DifferenceFound, causes_of, root

MARKER = "charges_its_draws"
EXCEPTION_CLAUSE = "rng.same-gradients"  # an exception that vanishes with fixed draws: what the recompute drew decided it
_NOT_THE_DRAWS: set[str] = set()  # signatures of exceptions that stayed with fixed draws, in this process


def pytest_configure(config):
    config.addinivalue_line("markers", f"{MARKER}: the test tells its random draws' differences from others itself "
                                       "(conformance/plugin/rerun.py does not run it again)")


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    try:
        return (yield)
    except (Exception, pytest.fail.Exception) as failure:
        causes = causes_of(failure)
        cause = root(causes)
        if (facts.read(pyfuncitem) is None or pyfuncitem.get_closest_marker(MARKER) or all(c.name == "rng" for c in causes)
                or not _draws_fixable(pyfuncitem)):
            raise
        if cause.signature in _NOT_THE_DRAWS or not _passes_with_fixed_draws(pyfuncitem):
            if cause.kind == "exception":
                _NOT_THE_DRAWS.add(cause.signature)
            raise
        if cause.kind == "exception":
            facts.charge(pyfuncitem, [EXCEPTION_CLAUSE])
        raise DifferenceFound("rng", f"{cause.name} differ(s) only with the random draws (with each drawn from a fixed seed, "
                             f"the test passes): {cause.detail}") from failure


def _draws_fixable(item) -> bool:
    """Whether the implementation the test checks runs the same code with its draws fixed (its protocol's
    ``fixed_draws``, default yes: a compiled row falls back to eager under the re-run's dispatch mode)."""
    implementation = getattr(item.funcargs.get("ckpt"), "impl", None)
    return getattr(implementation, "fixed_draws", True)


def _passes_with_fixed_draws(item) -> bool:
    # The failure reported is the run's: the re-run leaves its facts (the clauses it charged, its reproducer) as they
    # were and writes no script (a failure the re-run found instead, under fixed draws, would not reproduce without).
    arguments = {name: _written_already if name == "reproducer" else item.funcargs[name]
                 for name in item._fixtureinfo.argnames}
    run = facts.read(item)
    try:
        with draws.fixed() as fixed, uninitialized_memory_filled():
            item.obj(**arguments)
    except (Exception, pytest.fail.Exception, pytest.skip.Exception):
        return False
    finally:
        facts.write(item, run)
    return fixed.replaced > 0


def _written_already(source):
    """The re-run's stand-in for the reproducer fixture: it writes nothing."""
    return Path("(the run's reproducer)")


@contextlib.contextmanager
def uninitialized_memory_filled():
    """torch.empty's memory filled (NaN; an integer dtype's largest value) for the block, torch's deterministic mode
    on (warning only, where an op has no deterministic kernel). A failure that reads memory nobody wrote (an early
    stop that leaves a saved buffer unfilled) may pass a re-run by the allocator's chance: the freed block it reuses
    held the very values the fixed draws wrote before. Filled, it fails the re-run as it failed the run."""
    enabled, warn_only = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)
        torch.utils.deterministic.fill_uninitialized_memory = fill
