"""The module sweep: every ``nn`` module in torch's ModuleInfo database (``module_db``), a bounded
number of its samples (conformance/fixtures/sweeps.py, ``--hypothesis-profile``), in training mode, and in eval mode where the
database says the two modes differ (BatchNorm, InstanceNorm, the RNNs, the transformer layers), called through
checkpoint in each variant and compared with the un-checkpointed call of an equal module (built from the same seed)
on the same sample from the same seed.

Checked: the forward value, the gradients of the inputs and of every parameter (api.*; dropout and
RReLU modules also replay their draws: rng.*), and the module's buffers after forward and backward
(modulestate.buffers-match, a SHOULD: the docs only warn about state changed by the recompute).
"""

import pytest
import torch

from conformance.suite.sweep_checks import (  # noqa: F401  (uninitialized_memory_filled, running_test: autouse fixtures)
    uninitialized_memory_filled, running_test, checked, parametrize_cases, plain, reentrant_limits, runnable)
from conformance.fixtures import sweeps
from conformance.fixtures.sweeps import backward, forward, module_call, same_values

# The ops' and modules' own warnings (deprecations, beta features) are no part of what is checked here.
pytestmark = pytest.mark.filterwarnings("ignore")


def pytest_generate_tests(metafunc):
    parametrize_cases(metafunc, sweeps.module_cases)


def _runs(case, variant):
    """The plain run (after backward) and a call of a fresh, equal module for the checkpointed run."""
    runnable(case)
    expected = plain(case, lambda: module_call(case), backward, test="module")
    call = module_call(case)
    reentrant_limits(case, call, variant, expected)
    return expected, call


@pytest.mark.clause("api.forward-value", "api.same-gradients")
def test_module_matches_uncheckpointed_run(ckpt, variant, case):
    expected, call = _runs(case, variant)
    with checked("api.forward-value", case, variant):
        run = forward(call, case, ckpt.checkpoint)
        same_values(run.outputs, expected.outputs)
    with checked("api.same-gradients", case, variant):
        backward(run)
        same_values(run.grads, expected.grads)
        same_values(run.parameter_grads, expected.parameter_grads)
    if case.random:
        with checked("rng.stream-restored", case, variant):
            assert torch.equal(run.next_draw, expected.next_draw), "the RNG stream after backward differs"


@pytest.mark.clause("modulestate.buffers-match")
def test_module_state_matches_uncheckpointed_run(ckpt, variant, case):
    expected, call = _runs(case, variant)
    buffers = dict(expected.module.named_buffers())
    initial = dict(call.module.named_buffers())
    if all(torch.equal(value, initial[name]) for name, value in buffers.items()):
        pytest.skip("the un-checkpointed call changes no buffer of the module: no state to compare")
    with checked("modulestate.buffers-match", case, variant):
        backward(forward(call, case, ckpt.checkpoint))
        actual = dict(call.module.named_buffers())
        assert list(actual) == list(buffers), f"buffers {list(actual)}, without checkpoint {list(buffers)}"
        for name, value in buffers.items():
            torch.testing.assert_close(actual[name], value, equal_nan=True,
                                       msg=lambda m, name=name: f"buffer {name!r} after forward and backward: {m}")
