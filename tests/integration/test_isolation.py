"""Test isolation (conformance/plugin/isolation.py): a leaking implementation fails the tests that leak, not the
tests that run after them."""

import gc

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from conformance.plugin import isolation
from conformance.data.results import read_results

LEAKER = "tests.mutants.exceptions.leaks_saved_tensor_hooks"
# test_exceptions.py's failing forwards leak first; the gradient and output tests after them each run
# a backward that the leaked hooks would break.
FILES = ["conformance/suite/test_exceptions.py", "conformance/suite/test_gradmode.py", "conformance/suite/test_outputs.py"]


def test_a_leak_fails_the_leaking_tests_only(tmp_path):
    results = tmp_path / "results.json"
    pytest.main([f"--impl={LEAKER}", "--variant=non_reentrant", f"--results={results}", "-q", "-p", "no:cacheprovider",
                 *FILES])
    records = read_results(results).records
    failed = [r for r in records if r.verdict == "fail"]
    passed = [r for r in records if r.verdict == "pass"]
    assert failed, "the leaking mutant was not flagged"
    assert all(r.clauses == [isolation.LEFTOVER_CLAUSE] for r in failed), \
        [(r.nodeid, r.clauses) for r in failed if r.clauses != [isolation.LEFTOVER_CLAUSE]]
    assert all("test_exceptions.py" in r.nodeid for r in failed), "the leak cascaded into later tests"
    assert len(passed) >= 10, f"only {len(passed)} tests passed after the leak was restored"


@pytest.mark.parametrize("leak", ["grad mode", "autocast", "hooks", "dispatch mode", "switch"])
def test_each_leak_is_named_and_restored(leak):
    import torch.utils.checkpoint as torch_checkpoint

    before = isolation.snapshot()
    if leak == "grad mode":
        torch.set_grad_enabled(not torch.is_grad_enabled())
    elif leak == "autocast":
        torch.set_autocast_enabled("cpu", not torch.is_autocast_enabled("cpu"))
    elif leak == "hooks":
        torch._C._autograd._push_saved_tensors_default_hooks(lambda t: t, lambda t: t)
    elif leak == "dispatch mode":
        TorchDispatchMode().__enter__()
    else:
        torch_checkpoint._enable_checkpoint_early_stop = False
    changed = isolation.restore_changes(before)
    assert len(changed) == 1, changed
    assert isolation.snapshot() == before
    assert isolation.restore_changes(before) == []


def _fails_with_its_context_suspended():
    """torch 2.6's non-reentrant forward, in small: a generator pushes saved-tensor hooks, the function
    raises, and the generator stays suspended (hooks pushed) for as long as the exception holds this frame."""
    def context():
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            yield

    suspended = context()
    next(suspended)
    raise RuntimeError("the checkpointed function failed")


def test_a_context_a_failure_keeps_suspended_closes_itself_and_pops_its_hooks_once():
    outer = (lambda t: t, lambda t: t)
    torch._C._autograd._push_saved_tensors_default_hooks(*outer)  # a pair below, which must survive
    try:
        before = isolation.snapshot()
        try:
            _fails_with_its_context_suspended()
        except RuntimeError as failure:
            changed = isolation.restore_changes(before, failure)
            assert len(changed) == 1 and changed[0].startswith("saved-tensor hooks stack"), changed
            assert isolation.snapshot() == before
        # the failure is let go of here: a context popped from outside would now pop the pair below
        gc.collect()
        assert isolation.snapshot() == before, "the leaked context popped a second time when it was let go of"
    finally:
        while torch._C._autograd._top_saved_tensors_default_hooks(False) is not None:
            torch._C._autograd._pop_saved_tensors_default_hooks()


def _defers_its_exit_to_the_next_hooks_scope():
    """RETURNN's gradient_checkpoint_scope, in small: its hooks stay pushed after the call returns, and it
    pops them when the next saved_tensors_hooks scope is entered (it patched the scope's __enter__)."""
    hooks = torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
    hooks.__enter__()
    enter = torch.autograd.graph.saved_tensors_hooks.__enter__

    def deferred_exit_then_enter(self):
        torch.autograd.graph.saved_tensors_hooks.__enter__ = enter
        hooks.__exit__()
        return enter(self)

    torch.autograd.graph.saved_tensors_hooks.__enter__ = deferred_exit_then_enter
    return enter


def test_hooks_whose_owner_pops_them_at_the_next_hooks_scope_are_popped_once():
    outer = (lambda t: t, lambda t: t)
    torch._C._autograd._push_saved_tensors_default_hooks(*outer)  # a pair below, which must survive
    enter = torch.autograd.graph.saved_tensors_hooks.__enter__
    try:
        before = isolation.snapshot()
        _defers_its_exit_to_the_next_hooks_scope()
        changed = isolation.restore_changes(before)
        assert len(changed) == 1 and changed[0].startswith("saved-tensor hooks stack"), changed
        assert isolation.snapshot() == before
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # the next test's scope
            pass
        assert isolation.snapshot() == before, "the owner popped its hooks again, after the isolation had"
    finally:
        torch.autograd.graph.saved_tensors_hooks.__enter__ = enter
        while torch._C._autograd._top_saved_tensors_default_hooks(False) is not None:
            torch._C._autograd._pop_saved_tensors_default_hooks()


def test_explicit_default_options_hold_only_keywords_of_the_torch_under_test():
    from conformance.plugin.since_release import has_keyword

    assert has_keyword("early_stop", "2.13.0+cpu") and has_keyword("debug", "2.6.0")
    assert not has_keyword("early_stop", "2.6.0+cu124")  # the context manager is 2.1's, the keyword 2.9's


def test_a_clause_newer_than_the_torch_under_test_reads_not_in_this_release():
    from conformance.plugin.since_release import newer_clauses
    from conformance.data.vocabulary import release_of

    assert release_of("2.6.0+cu124") == "2.6"
    assert newer_clauses(["groups.reentrant-noop", "api.forward-value"], "2.6.0") == [("groups.reentrant-noop", "2.10")]
    assert newer_clauses(["groups.reentrant-noop"], "2.10.0") == []
    assert newer_clauses(["earlystop.keyword-disables"], "2.13.0+cpu") == []
