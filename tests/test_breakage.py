"""Row-level known breakage ([[breakage]] in expectations.toml, conformance/breakage.py): one declared
reason covers every failing test of its row, and goes stale when the row stops failing."""

import pytest

from conformance.expectations import load_breakages
from conformance.results import read_results

FILE = "conformance/suite/test_exceptions.py"


def run(tmp_path, impl, breakage_impl):
    expectations = tmp_path / "expectations.toml"
    expectations.write_text(f'[[breakage]]\nimpl = "{breakage_impl}"\nvariant = "non_reentrant"\n'
                            f'reason = "leaves hooks behind after a failed forward"\n')
    results = tmp_path / "results.json"
    status = pytest.main([f"--impl={impl}", "--variant=non_reentrant", f"--expectations={expectations}",
                          f"--results={results}", "-q", "-p", "no:cacheprovider", FILE])
    return status, read_results(results).records


def test_a_breakage_covers_every_failure_of_its_row(tmp_path):
    status, records = run(tmp_path, "tests.mutants.exceptions.leaks_saved_tensor_hooks", "tests.mutants.exceptions.leaks_saved_tensor_hooks")
    outcomes = {r.verdict for r in records}
    assert "expected_deviation" in outcomes and "fail" not in outcomes, outcomes
    assert status == 0


def test_a_breakage_whose_row_passes_is_stale(tmp_path):
    status, records = run(tmp_path, "torch.utils.checkpoint", "torch.utils.checkpoint")
    assert {r.verdict for r in records} <= {"pass", "skip"}
    assert status != 0, "a breakage none of whose tests failed did not fail the run"


def test_another_row_is_not_covered(tmp_path):
    status, records = run(tmp_path, "tests.mutants.exceptions.leaks_saved_tensor_hooks", "some_other_impl")
    assert "fail" in {r.verdict for r in records}


def test_breakages_need_a_reason(tmp_path):
    path = tmp_path / "expectations.toml"
    path.write_text('[[breakage]]\nimpl = "x"\nreason = " "\n')
    with pytest.raises(ValueError, match="no reason"):
        load_breakages(path)
