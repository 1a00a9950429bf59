"""What the sweep tests (test_sweep_*.py) share: their parameters, the plain run they compare with,
and failures that name the clause, the op or module, the sample and the variant."""

import contextlib

import pytest
import torch

from conformance.testing import draws
from conformance.data import facts
from conformance.data.causes import Cause, causes_of
from conformance.fixtures import sweeps

RNG_CLAUSES = ("rng.same-forward", "rng.same-gradients", "rng.stream-restored")

_RUNNING = {}  # "item": the sweep test running now, whose failure checked() charges to one clause


@pytest.fixture(autouse=True)
def running_test(request):
    _RUNNING["item"] = request.node
    yield
    _RUNNING.pop("item", None)

@pytest.fixture(autouse=True)
def uninitialized_memory_filled():
    """Fill new tensors' uninitialized memory (with NaN) during sweep tests, so that an implementation
    handing backward a buffer nobody wrote fails every time, not only when the allocator happens to
    reuse memory holding the right values. torch does this under deterministic algorithms
    (torch.utils.deterministic.fill_uninitialized_memory); warn_only keeps ops without a
    deterministic kernel running."""
    before = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])


# test function -> which cases it takes, and the extra clauses a case adds to the test's own.
_SELECT = {
    "test_op_autograd_grad_matches_uncheckpointed_run": lambda case: case.problem or case.info.supports_autograd,
    "test_module_state_matches_uncheckpointed_run": lambda case: case.problem or any(True for _ in sweeps.build_module(case).buffers()),
}


def _extra_clauses(test, case):
    clauses = []
    if case.random and test.endswith("matches_uncheckpointed_run") and "autograd_grad" not in test:
        clauses += RNG_CLAUSES
    if case.gradgrad and "autograd_grad" in test:
        clauses.append("retain.double-backward")
    return clauses


def params(cases, test):
    """The cases a sweep test takes, as pytest params: id ``<name>-<dtype>-sample<N>``, extra clause marks."""
    select = _SELECT.get(test, lambda case: True)
    return [pytest.param(case, id=case.id, marks=[pytest.mark.clause(*extra)] if (extra := _extra_clauses(test, case)) else [])
            for case in cases if select(case)]


def parametrize_cases(metafunc, cases):
    """Parametrize a sweep test's ``case`` over ``cases(profile)``, sized by the run's hypothesis profile."""
    if "case" in metafunc.fixturenames:
        metafunc.parametrize("case", params(cases(sweeps.profile_of(metafunc.config)), metafunc.function.__name__))


# What each check compares with the plain run: the observable (conformance/data/causes.py) a failed comparison differs in
# (the rng clauses' checks compare runs that differ in nothing but their random draws).
OBSERVABLE = {"api.forward-value": "result", "api.same-gradients": "gradients", "gradapi.non-reentrant-grad": "gradients",
              "retain.double-backward": "gradients", "callers.no-grad": "result", "rng.same-forward": "rng",
              "rng.same-gradients": "rng", "rng.stream-restored": "rng", "modulestate.buffers-match": "objects"}


@contextlib.contextmanager
def checked(clause, case, variant):
    """Any error inside is a failure of clause, named as "<clause> fails for <op>, sample N, <variant>". Its cause
    is the error the checkpointed run raised, or the comparison's difference in the clause's observable."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001  (an error from the checkpointed run is a failure too)
        _charge(clause)
        detail = str(exc) if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {exc}"
        failure = AssertionError(f"{clause} fails for {case.label(variant)}: {detail}")
        failure.causes = causes_of(exc) if not isinstance(exc, AssertionError) or hasattr(exc, "causes") \
            else (Cause("difference", OBSERVABLE[clause], str(exc)),)
        raise failure from None


def _charge(clause):
    """A sweep test checks several clauses in turn: its failure is the failure of the one that failed, not
    of the others it would have checked (and is judged by it: what is expected, the level)."""
    item = _RUNNING.get("item")
    if item is not None:
        facts.charge(item, [clause])


def _first_line(exc):
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:300]


_PLAIN = {}  # (test, case id) -> the plain run or why it cannot be compared with: shared by the variants


def plain(case, make_call, gradients, test=None):
    """The un-checkpointed run (twice from the same seed); skip where it fails or is not deterministic.

    With test given, the result is computed once per case and test and shared by the variants.
    """
    if test is None:
        return _plain(case, make_call, gradients)
    key = (test, case.id, draws.active())  # a re-run with fixed draws (conformance/plugin/rerun.py) compares with its own
    if key not in _PLAIN:
        try:
            _PLAIN[key] = _plain(case, make_call, gradients)
        except pytest.skip.Exception as skip:
            _PLAIN[key] = str(skip.msg)
    if isinstance(_PLAIN[key], str):
        pytest.skip(_PLAIN[key])
    return _PLAIN[key]


def _plain(case, make_call, gradients):
    runs = []
    for _ in range(2):
        try:
            run = sweeps.forward(make_call(), case)
            if any(i._version for i in run.inputs):
                pytest.skip("the function updates its tensor arguments in place (e.g. running statistics), so the "
                            "recompute runs on changed state: the docs warn an error or other gradients may follow")
            if gradients is not None:
                gradients(run)
        except Exception as exc:  # noqa: BLE001
            pytest.skip(f"the un-checkpointed run fails: {_first_line(exc)}")
        runs.append(run)
    try:
        sweeps.same_values(runs[1].outputs, runs[0].outputs, exact=True)
        for attribute in ("grads", "second", "parameter_grads"):
            sweeps.same_values(getattr(runs[1], attribute) or [], getattr(runs[0], attribute) or [], exact=True)
        sweeps.same_values([runs[1].next_draw], [runs[0].next_draw], exact=True)
    except AssertionError as exc:
        pytest.skip(f"the un-checkpointed run is not deterministic: two runs from the same seed differ ({str(exc)[:200]})")
    return runs[0]


def runnable(case):
    """Skip a case whose sample could not be built, saying why."""
    if case.problem:
        pytest.skip(case.problem)


def reentrant_limits(case, call, variant, expected):
    """The reentrant variant's documented limits beyond top-level tensor arguments (which every sweep
    call has): it gives gradients only where at least one input requires grad, and it does not
    consider tensors in nested structures, outputs included, as participating in autograd."""
    if variant == "reentrant" and expected.nested:
        pytest.skip("reentrant variant: the output nests tensors in structures (documented: not considered by autograd)")
    if variant == "reentrant" and not any(t.requires_grad for t in call.tensors):
        pytest.skip("reentrant variant: no tensor input requires grad (documented: its outputs get no gradient)")
