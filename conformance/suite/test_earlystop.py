"""Early stop of the recomputation (clauses earlystop.*).

AfterLastSave counts how often the code after its last saving op runs: once (the forward) when
the recompute stops early, twice when the recompute runs the whole function.
"""

import pytest
import torch

from conformance.testing.assertions import assert_same_gradients
from conformance.fixtures.functions import AfterLastSave, SavesNothing
from conformance.fixtures.inputs import OPTIONS, options_for, twin_leaves

FORWARD_ONLY, WHOLE_RECOMPUTE = 1, 2


def checkpointed_run(ckpt, function_class, **kwargs):
    """Checkpoint a fresh function_class(), backward, check the gradient; return the function."""
    fn = function_class()
    x, reference = twin_leaves()
    ckpt.checkpoint(fn, x, **kwargs).sum().backward()
    function_class()(reference).sum().backward()
    assert_same_gradients(x.grad, reference.grad, ["input gradient"])
    return fn


def assert_ran_to_end(fn, expected, why):
    assert fn.ran_to_end == expected, (
        f"the code after the function's last saving op ran {fn.ran_to_end} times, expected {expected}: {why}"
    )


@pytest.mark.clause("earlystop.default-stops")
@pytest.mark.parametrize("options", OPTIONS)
def test_recompute_stops_after_last_needed_tensor(ckpt, options):
    fn = checkpointed_run(ckpt, AfterLastSave, **options_for(ckpt, options))
    assert_ran_to_end(fn, FORWARD_ONLY, "with early stop (the default) the recompute stops once exp is recomputed")


@pytest.mark.clause("earlystop.default-stops")
def test_nothing_needed_means_nothing_recomputed(ckpt):
    fn = checkpointed_run(ckpt, SavesNothing)
    assert_ran_to_end(fn, FORWARD_ONLY, "the function saves no tensor, so the recompute has nothing to compute")


def rrelu_last(x):
    """rrelu (training) saves its noise buffer and then fills it in place, in one op; no op after it saves a tensor."""
    return torch.nn.functional.rrelu(x, training=True) * 2.0


@pytest.mark.clause("earlystop.needed-tensors-complete")
def test_early_stop_waits_for_an_op_that_writes_what_it_saved(ckpt):
    x, reference = twin_leaves()
    torch.manual_seed(3)
    ckpt.checkpoint(rrelu_last, x).sum().backward()
    torch.manual_seed(3)
    rrelu_last(reference).sum().backward()
    assert_same_gradients(x.grad, reference.grad, ["input gradient through rrelu, whose saved noise is written after "
                                                   "it is saved"])


@pytest.mark.clause("earlystop.keyword-disables")
def test_early_stop_false_recomputes_whole_function(ckpt):
    fn = checkpointed_run(ckpt, AfterLastSave, early_stop=False)
    assert_ran_to_end(fn, WHOLE_RECOMPUTE, "early_stop=False recomputes the function to its end")


@pytest.mark.clause("earlystop.context-manager-disables")
def test_context_manager_at_forward_disables_early_stop(ckpt):
    fn = AfterLastSave()
    x, reference = twin_leaves()
    with ckpt.set_checkpoint_early_stop(False):
        out = ckpt.checkpoint(fn, x)
    out.sum().backward()  # outside the manager: the docs say it need not be active during backward
    AfterLastSave()(reference).sum().backward()
    assert_same_gradients(x.grad, reference.grad, ["input gradient"])
    assert_ran_to_end(fn, WHOLE_RECOMPUTE, "set_checkpoint_early_stop(False) was active during the forward")


@pytest.mark.clause("earlystop.context-manager-overrides")
@pytest.mark.parametrize("early_stop", [True, False])
@pytest.mark.parametrize("early_stop_enabled", [True, False])
def test_context_manager_overrides_argument(ckpt, early_stop_enabled, early_stop):
    fn = AfterLastSave()
    x, _ = twin_leaves()
    with ckpt.set_checkpoint_early_stop(early_stop_enabled):
        out = ckpt.checkpoint(fn, x, early_stop=early_stop)
    out.sum().backward()
    expected = FORWARD_ONLY if early_stop_enabled else WHOLE_RECOMPUTE
    assert_ran_to_end(fn, expected, f"set_checkpoint_early_stop({early_stop_enabled}) overrides early_stop={early_stop}")


@pytest.mark.clause("earlystop.reentrant-recomputes-all")
def test_reentrant_recomputes_whole_function(ckpt):
    fn = checkpointed_run(ckpt, AfterLastSave)
    assert_ran_to_end(fn, WHOLE_RECOMPUTE, "reentrant checkpoint always recomputes the function in its entirety")


@pytest.mark.clause("earlystop.reentrant-recomputes-all")
@pytest.mark.parametrize("early_stop_enabled", [True, False])
def test_reentrant_recomputes_whole_function_under_either_early_stop_override(ckpt, early_stop_enabled):
    if "early_stop" not in ckpt.impl.capabilities.features:
        pytest.skip("the implementation does not claim early_stop (set_checkpoint_early_stop)")
    with ckpt.set_checkpoint_early_stop(early_stop_enabled):
        fn = checkpointed_run(ckpt, AfterLastSave)
    assert_ran_to_end(fn, WHOLE_RECOMPUTE, f"reentrant checkpoint recomputes in its entirety, "
                      f"set_checkpoint_early_stop({early_stop_enabled}) or not")


@pytest.mark.clause("earlystop.reentrant-ignores-keyword")
@pytest.mark.parametrize("early_stop", [True, False])
def test_reentrant_ignores_early_stop_argument(ckpt, early_stop):
    fn = checkpointed_run(ckpt, AfterLastSave, early_stop=early_stop)
    assert_ran_to_end(fn, WHOLE_RECOMPUTE, f"early_stop={early_stop} is ignored by the reentrant variant")


# ---- torch's test_nested_checkpoint_set_early_stop (test_autograd.py): docs/UPSTREAM_TESTS.md ----

@pytest.mark.clause("earlystop.context-manager-overrides")
def test_innermost_context_manager_decides_and_the_enclosing_one_decides_again_after_it(ckpt):
    inner, outer = AfterLastSave(), AfterLastSave()
    with ckpt.set_checkpoint_early_stop(False):
        with ckpt.set_checkpoint_early_stop(True):
            inner_out = ckpt.checkpoint(inner, twin_leaves()[0], early_stop=False)
        outer_out = ckpt.checkpoint(outer, twin_leaves()[0], early_stop=True)
    inner_out.sum().backward()
    outer_out.sum().backward()
    assert_ran_to_end(inner, FORWARD_ONLY, "the innermost set_checkpoint_early_stop(True) decides, whatever the "
                      "enclosing manager and the argument say")
    assert_ran_to_end(outer, WHOLE_RECOMPUTE, "once the inner manager has exited, the enclosing "
                      "set_checkpoint_early_stop(False) decides again")
