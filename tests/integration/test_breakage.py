"""Row-level known breakage ([[breakage]] in expectations.toml, conformance/breakage.py): one declared
reason covers every failing test of its row, and goes stale when the row stops failing."""

import io
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.data.expectations import Breakage, load_breakages, rejudge, stale_declarations
from conformance.data.results import Facts, Record, Results, read_results
from conformance.run.supervisor import Outcome

ROOT = Path(__file__).parents[2]
FILE = "conformance/suite/test_exceptions.py"
# What the mutant's leaked hooks look like: a later test's saved tensors reach them, and the harness finds them left.
LEAK = ('failure = [{ exception = "RuntimeError", message = "saved-tensor hook leaked" }, '
        '{ exception = "LeftoverState", message = "left global state behind" }]')


def run(tmp_path, impl, breakage_impl, *args):
    expectations = tmp_path / "expectations.toml"
    expectations.write_text(f'[[breakage]]\nimpl = "{breakage_impl}"\nvariant = "non_reentrant"\n{LEAK}\n'
                            f'reason = "leaves hooks behind after a failed forward"\n')
    results = tmp_path / "results.json"
    arguments = [f"--impl={impl}", "--variant=non_reentrant", f"--expectations={expectations}",
                 f"--results={results}", "-q", "-p", "no:cacheprovider", *args, FILE]
    if args:  # pytest-xdist's workers are processes of their own: a pytest of its own, not one inside this one
        status = subprocess.run([sys.executable, "-m", "pytest", *arguments], cwd=ROOT, timeout=300).returncode
    else:
        status = pytest.main(arguments)
    return status, read_results(results).records


def test_a_breakage_covers_every_failure_of_its_row(tmp_path):
    status, records = run(tmp_path, "tests.mutants.exceptions.leaks_saved_tensor_hooks", "tests.mutants.exceptions.leaks_saved_tensor_hooks")
    outcomes = {r.verdict for r in records}
    assert "expected_deviation" in outcomes and "fail" not in outcomes, outcomes
    assert status == 0


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_a_breakage_whose_row_passes_is_stale(tmp_path, workers):
    """Judged over the whole run's records: under pytest-xdist, by the controller, which receives every worker's."""
    status, records = run(tmp_path, "torch.utils.checkpoint", "torch.utils.checkpoint", *workers)
    assert {r.verdict for r in records} <= {"pass", "skip"}
    assert status != 0, "a breakage none of whose tests failed did not fail the run"


def test_another_row_is_not_covered(tmp_path):
    status, records = run(tmp_path, "tests.mutants.exceptions.leaks_saved_tensor_hooks", "some_other_impl")
    assert "fail" in {r.verdict for r in records}


def test_a_breakage_of_some_clauses_wins_over_its_rows_whatever_the_order(tmp_path):
    path = tmp_path / "expectations.toml"
    path.write_text('[[breakage]]\nimpl = "x"\nfailure = { observable = "state" }\nreason = "the whole row"\n\n'
                    '[[breakage]]\nimpl = "x"\nclauses = ["exceptions.no-leftover-state"]\nfailure = { observable = "state" }\n'
                    'reason = "its own cause"\n')
    record = Record("t[non_reentrant]", Facts(["exceptions.no-leftover-state"], "non_reentrant", "cpu"), "fail", "", 0.0)
    judged = rejudge(Results({"implementation": "x", "torch": "2.13.0"}, [record]), [], breakages=load_breakages(path))
    assert judged.records[0].expected.reason == "known breakage: its own cause"


def test_breakages_need_a_reason(tmp_path):
    path = tmp_path / "expectations.toml"
    path.write_text('[[breakage]]\nimpl = "x"\nfailure = { observable = "state" }\nreason = " "\n')
    with pytest.raises(ValueError, match="no reason"):
        load_breakages(path)


def test_a_run_narrowed_to_some_clauses_does_not_judge_staleness(tmp_path):
    # The mutant's row fails only its leak tests: narrowed to another clause, none of them ran.
    expectations = tmp_path / "expectations.toml"
    expectations.write_text(f'[[breakage]]\nimpl = "tests.mutants.exceptions.leaks_saved_tensor_hooks"\n{LEAK}\n'
                            'reason = "leaves hooks behind after a failed forward"\n')
    status = pytest.main(["--impl=tests.mutants.exceptions.leaks_saved_tensor_hooks", "--variant=non_reentrant",
                          f"--expectations={expectations}", "--clause=exceptions.recompute-propagates", "-q",
                          "-p", "no:cacheprovider", FILE])
    assert status == 0


def _results(*records, impl="someimpl", torch_version="2.13.0+cpu"):
    return Results(header={"implementation": impl, "torch": torch_version}, records=list(records))


BREAKAGE = Breakage(impl="someimpl", reason="rewrites its inputs", variant="non_reentrant")


def test_stale_declarations_are_judged_on_the_merged_records():
    failing = Record("t::a[non_reentrant]", Facts(["api.forward-value"], "non_reentrant", "cpu", expected=BREAKAGE.expected), "fail")
    passing = Record("t::b[non_reentrant]", Facts(["api.forward-value"], "non_reentrant", "cpu"), "pass")
    other_variant = Record("t::b[reentrant]", Facts(["api.forward-value"], "reentrant", "cpu"), "pass")
    assert stale_declarations(_results(failing, passing), [BREAKAGE]) == []
    assert stale_declarations(_results(passing), [BREAKAGE]) == [BREAKAGE]
    assert stale_declarations(_results(other_variant), [BREAKAGE]) == [], "a breakage of a row that did not run is not stale"
    assert stale_declarations(_results(passing, torch_version="2.6.0"),
                           [Breakage(impl="someimpl", reason="r", torch="2.13")]) == []


def test_the_runner_fails_on_a_stale_breakage(tmp_path, monkeypatch):
    from conformance import run

    def supervise(spec, out_dir, limits, **kwargs):
        return Outcome(tmp_path / "r.json", tmp_path / "r.log", [], 1, 0.1, {"pass": 3}, [], [BREAKAGE])

    monkeypatch.setattr(run, "supervise", supervise)
    stream = io.StringIO()
    assert run.run_all([run.RunSpec("someimpl", "non_reentrant", "cpu")], tmp_path, run.Limits(), stream=stream) == 1
    assert "stale declaration" in stream.getvalue()
