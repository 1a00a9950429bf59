"""The op sweep: every operator in torch's OpInfo database (``op_db``), a bounded number of its samples
(see conformance/fixtures/sweeps.py and ``--hypothesis-profile``), checkpointed in each variant and compared
with the un-checkpointed run of the same sample from the same seed.

Clauses that hold for any function: the forward value and the gradients (api.*), random ops'
replayed draws (rng.*), torch.autograd.grad and second-order gradients (non-reentrant: gradapi.*,
retain.double-backward), no spurious determinism error (determinism.*: a CheckpointError from a
faithful recompute fails the test), and under torch.no_grad() a plain call (callers.no-grad).

Tolerances are torch.testing's defaults for the dtype (float64: rtol=atol=1e-7): OpInfo's own
per-test overrides only ever loosen them, and a faithful recompute runs the same kernels.
"""

import pytest
import torch

from conformance.fixtures import sweeps
from conformance.fixtures.sweeps import backward, forward, op_call, same_values, second_order
from conformance.suite.sweep_checks import (  # noqa: F401  (uninitialized_memory_filled, running_test: autouse fixtures)
    uninitialized_memory_filled, running_test, checked, parametrize_cases, plain, reentrant_limits, runnable)


# The ops' and modules' own warnings (deprecations, beta features) are no part of what is checked here.
pytestmark = pytest.mark.filterwarnings("ignore")


def pytest_generate_tests(metafunc):
    parametrize_cases(metafunc, sweeps.op_cases)


@pytest.mark.clause("api.forward-value", "api.same-gradients")
def test_op_matches_uncheckpointed_run(ckpt, variant, case):
    """Forward value and every input gradient equal the plain run's; random ops (rng.* marks) also
    replay their draws and leave the caller's RNG stream as the plain run does."""
    runnable(case)
    call = op_call(case)
    expected = plain(case, lambda: call, backward, test="backward")
    reentrant_limits(case, call, variant, expected)
    with checked("api.forward-value", case, variant):
        run = forward(call, case, ckpt.checkpoint)
        same_values(run.outputs, expected.outputs)
    with checked("api.same-gradients", case, variant):
        backward(run)
        same_values(run.grads, expected.grads)
    if case.random:
        with checked("rng.stream-restored", case, variant):
            assert torch.equal(run.next_draw, expected.next_draw), "the RNG stream after backward differs"


@pytest.mark.clause("gradapi.non-reentrant-grad", "determinism.default-detects")
def test_op_autograd_grad_matches_uncheckpointed_run(ckpt, variant, case):
    """torch.autograd.grad through the checkpoint (and, where OpInfo says the op supports gradgrad,
    second-order gradients through it: retain.double-backward) equals the plain run's."""
    runnable(case)
    call = op_call(case)
    twice = case.gradgrad

    def grads(run):
        run = backward(run, "grad", create_graph=twice)
        return second_order(run) if twice else run

    expected = plain(case, lambda: call, grads, test="grad")
    with checked("gradapi.non-reentrant-grad", case, variant):
        run = backward(forward(call, case, ckpt.checkpoint), "grad", create_graph=twice)
        same_values(run.grads, expected.grads)
    if twice:  # the second-order pass is its own step: its failure is retain.double-backward's
        with checked("retain.double-backward", case, variant):
            same_values(second_order(run).second, expected.second)


@pytest.mark.clause("callers.no-grad")
def test_op_under_no_grad_is_a_plain_call(ckpt, variant, case):
    runnable(case)
    call = op_call(case)
    with torch.no_grad():
        expected = plain(case, lambda: call, None, test="no_grad")
        with checked("callers.no-grad", case, variant):
            run = forward(call, case, ckpt.checkpoint)
            same_values(run.outputs, expected.outputs)
            # Only outputs that do not require grad without checkpoint are bound: an output that is an
            # input (or a view of one) requiring grad requires grad under no_grad too.
            unexpected = sorted(set(_requiring_grad(run.outputs)) - set(_requiring_grad(expected.outputs)))
            assert not unexpected, f"outputs {unexpected} require grad under torch.no_grad(), not without checkpoint"


def _requiring_grad(outputs):
    return [i for i, o in enumerate(outputs) if isinstance(o, torch.Tensor) and o.requires_grad]
