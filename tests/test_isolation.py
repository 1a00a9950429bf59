"""Test isolation (conformance/isolation.py): a leaking implementation fails the tests that leak, not the
tests that run after them."""

import pytest
import torch

from conformance import isolation
from conformance.results import read_results

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


@pytest.mark.parametrize("leak", ["grad mode", "autocast", "hooks", "switch"])
def test_each_leak_is_named_and_restored(leak):
    import torch.utils.checkpoint as torch_checkpoint

    before = isolation.snapshot()
    if leak == "grad mode":
        torch.set_grad_enabled(not torch.is_grad_enabled())
    elif leak == "autocast":
        torch.set_autocast_enabled("cpu", not torch.is_autocast_enabled("cpu"))
    elif leak == "hooks":
        torch._C._autograd._push_saved_tensors_default_hooks(lambda t: t, lambda t: t)
    else:
        torch_checkpoint._enable_checkpoint_early_stop = False
    changed = isolation.restore_changes(before)
    assert len(changed) == 1, changed
    assert isolation.snapshot() == before
    assert isolation.restore_changes(before) == []


def test_a_clause_newer_than_the_torch_under_test_reads_not_in_this_release():
    from conformance.releases import newer_clauses, release_of

    assert release_of("2.6.0+cu124") == "2.6"
    assert newer_clauses(["groups.reentrant-noop", "api.forward-value"], "2.6.0") == [("groups.reentrant-noop", "2.10")]
    assert newer_clauses(["groups.reentrant-noop"], "2.10.0") == []
    assert newer_clauses(["earlystop.keyword-disables"], "2.13.0+cpu") == []
