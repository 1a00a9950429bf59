"""Only a documented MUST fails a run: SHOULD/MAY failures read "SHOULD unmet", OBSERVED ones "differs from
torch", in pytest's summary, the results file and the report, and `--strict-levels` makes them fail; a known upstream
bug is named in its failures (tests/zoo/test_correct.py runs correct implementations through the whole suite)."""

import json
import textwrap

import pytest

from conformance.data.expectations import load_known_upstream
from conformance.report import write_report
from conformance.data.results import read_results
from conformance.run import Limits, RunSpec, run_all
from conformance.data.vocabulary import strictest, verdict
from tests.integration.test_plugin import REPO, run_pytest

RRELU_BUG = "pytorch/pytorch#193671"
OFFLOAD_BUG = "pytorch/pytorch#185015"


@pytest.mark.parametrize("level, expected", [("MUST", "fail"), ("SHOULD", "should"), ("MAY", "should"),
                                             ("OBSERVED", "differs"), ("?", "fail")])
def test_an_unexpected_failure_takes_the_verdict_of_its_level(level, expected):
    assert verdict("fail", None, level) == expected
    assert verdict("fail", "deviation", level) == "expected_deviation"  # declarations keep their meaning
    assert verdict("pass", None, level) == "pass"


def test_a_test_is_held_to_the_strictest_level_of_its_clauses():
    assert strictest(["OBSERVED", "SHOULD"]) == "SHOULD"
    assert strictest(["OBSERVED", "MUST"]) == "MUST"
    assert strictest(["OBSERVED", "a level of another harness"]) == "MUST"
    assert strictest([]) == "MUST"


LEVELLED_TESTS = """
import pytest

@pytest.mark.clause("debug.rejects-context-fn")  # OBSERVED
def test_observed():
    assert False, "accepts debug=True with a context_fn"

@pytest.mark.clause("modulestate.buffers-match")  # SHOULD
def test_should():
    assert False, "running statistics updated twice"

@pytest.mark.clause("debug.rejects-context-fn", "api.forward-value")  # charged to an OBSERVED and a MUST clause
def test_observed_and_must():
    assert False, "the MUST check failed too"
"""


def _levelled(pytester, monkeypatch, *args):
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    pytester.makepyfile(test_levelled=LEVELLED_TESTS)
    results = pytester.path / "results.json"
    outcome = pytester.runpytest_subprocess("-p", "conformance.plugin", "-p", "no:cacheprovider",
                                            "--impl=torch.utils.checkpoint", f"--results={results}", *args)
    verdicts = {r.nodeid.split("::")[-1]: r.verdict for r in read_results(results).records}
    return outcome, verdicts


def test_should_and_observed_failures_are_reported_apart_and_do_not_fail_the_run(pytester, monkeypatch):
    outcome, verdicts = _levelled(pytester, monkeypatch, "-k", "not must")
    assert outcome.ret == 0, outcome.stdout.str()
    assert verdicts == {"test_observed": "differs", "test_should": "should"}
    summary = outcome.stdout.lines[-1]
    assert "1 SHOULD unmet" in summary and "1 differs from torch" in summary and "failed" not in summary
    for line in ("*△*(modulestate.buffers-match)", "*≠*(debug.rejects-context-fn)"):  # in either order
        outcome.stdout.fnmatch_lines(["*failures by cause*", "not binding*", line])


def test_a_test_whose_failing_checks_include_a_must_fails_the_run(pytester, monkeypatch):
    outcome, verdicts = _levelled(pytester, monkeypatch, "-k", "must")
    assert outcome.ret == pytest.ExitCode.TESTS_FAILED
    assert verdicts == {"test_observed_and_must": "fail"}
    outcome.stdout.fnmatch_lines(["FAILED *test_observed_and_must*"])


def test_strict_levels_makes_every_failure_fail_the_run(pytester, monkeypatch):
    outcome, verdicts = _levelled(pytester, monkeypatch, "--strict-levels", "-k", "not must")
    assert outcome.ret == pytest.ExitCode.TESTS_FAILED
    assert verdicts == {"test_observed": "differs", "test_should": "should"}  # the verdicts still say which level
    outcome.stdout.fnmatch_lines(["*2 failed*"])


def test_the_results_file_stores_the_level_its_verdict_derives_from(tmp_path):
    results = tmp_path / "r.json"
    run_pytest("--impl=tests.correct.torch_alias", "--clause=modulestate", "--variant=reentrant",
               "-k", "BatchNorm1d and not eval", f"--results={results}", "-q")
    records = json.loads(results.read_text())["records"]
    assert {(r["status"], r["expected"], r["level"]) for r in records} == {("fail", None, "SHOULD")}
    assert {r.verdict for r in read_results(results).records} == {"should"}


def test_the_runner_exits_zero_on_an_observed_difference_unless_strict(tmp_path, capsys):
    """An implementation that accepts debug=True with a context_fn differs from torch (OBSERVED), in the
    runner's exit status, its progress and the report; a MUST break still fails it."""
    observed = [RunSpec("tests.mutants.debug.debug_accepts_context_fn", "non_reentrant", "cpu")]
    limits = Limits(test_timeout=60)
    assert run_all(observed, tmp_path / "loose", limits, clauses=["debug.rejects-context-fn"]) == 0
    assert run_all(observed, tmp_path / "strict", limits, clauses=["debug.rejects-context-fn"], strict_levels=True) == 1
    assert "1 differs" in capsys.readouterr().out
    write_report(sorted((tmp_path / "loose").glob("*.json")), tmp_path / "page.html")
    [implementation] = (tmp_path / "page-details").glob("impl-*.html")  # its cells and findings
    assert 'data-verdict="differs"' in implementation.read_text() and "differs from torch" in implementation.read_text()
    must = [RunSpec("tests.mutants.contextfn.swaps_context_managers", "non_reentrant", "cpu")]
    assert run_all(must, tmp_path / "must", limits, clauses=["contextfn.forward-and-recompute"]) == 1


def test_known_upstream_bugs_name_known_clauses_and_match_by_test():
    bug = next(b for b in load_known_upstream() if b.bug == RRELU_BUG)
    nodeid = "conformance/suite/test_sweep_ops.py::test_op_matches_uncheckpointed_run[nn.functional.rrelu-float64-sample0-non_reentrant]"
    assert bug.explains(nodeid=nodeid, clauses=["api.same-gradients"], variant="non_reentrant")
    assert not bug.explains(nodeid=nodeid, clauses=["api.forward-value"], variant="non_reentrant")
    assert not bug.explains(nodeid=nodeid.replace("rrelu", "relu"), clauses=["api.same-gradients"], variant="non_reentrant")
    assert RRELU_BUG in bug.note and bug.url in bug.note


def test_known_upstream_entries_name_registered_clauses(tmp_path):
    path = tmp_path / "expectations.toml"
    path.write_text(textwrap.dedent("""
        [[known_upstream]]
        test = "x"
        bug = "a/b#1"
        url = "https://example.org"
        summary = "s"
        clauses = ["no.such-clause"]
        failure = { observable = "gradients" }
    """))
    with pytest.raises(ValueError, match="no.such-clause"):
        load_known_upstream(path)


CHARGED_TESTS = """
import pytest

from conformance.suite.sweep_checks import checked, running_test  # noqa: F401  (the sweeps' own charging)


class Case:
    def label(self, variant):
        return f"a sample, {variant}"


@pytest.mark.clause("gradapi.non-reentrant-grad", "determinism.default-detects")
def test_grad_and_determinism(variant):
    with checked("gradapi.non-reentrant-grad", Case(), variant):
        assert False, "torch.autograd.grad gave other gradients than the plain run"
"""

# torch's own checkpoint, claiming every feature but the determinism check
WITHOUT_DETERMINISM_CHECK = """
from torch.utils.checkpoint import checkpoint, checkpoint_sequential
from conformance.data.vocabulary import FEATURES

__conformance__ = {"capabilities": {"features": [f for f in FEATURES if f != "determinism_check"]}}
"""


def test_a_must_failure_is_judged_by_the_clause_it_is_charged_to(pytester, monkeypatch):
    """Issue 23: a test of two clauses fails on the one whose feature the implementation claims; that the
    other's feature is not claimed must not turn the failure into "unsupported", in pytest's exit status,
    the results file or the report."""
    monkeypatch.setenv("PYTHONPATH", f"{REPO}:{pytester.path}")
    pytester.makepyfile(test_charged=CHARGED_TESTS, no_determinism_check=WITHOUT_DETERMINISM_CHECK)
    results = pytester.path / "results.json"
    outcome = pytester.runpytest_subprocess("-p", "conformance.plugin", "-p", "no:cacheprovider", "-rN",
                                            "--impl=no_determinism_check", f"--results={results}")
    outcome.stdout.fnmatch_lines(["*1 failed*"])
    assert outcome.ret == pytest.ExitCode.TESTS_FAILED
    [record] = read_results(results).records
    assert (record.clauses, record.expected, record.level, record.verdict) == (["gradapi.non-reentrant-grad"], None, "MUST", "fail")
    write_report([results], pytester.path / "page.html")
    [page] = (pytester.path / "page-details").glob("impl-*.html")
    assert 'data-verdict="fail"' in page.read_text()


REPRODUCED_TESTS = """
import pytest

from conformance.suite.conftest import reproducer  # noqa: F401


@pytest.mark.clause("api.forward-value")
def test_with_a_reproducer(variant, reproducer):
    reproducer("print('the failing call, standalone')\\n")
    assert False, "the output differs"
"""


def test_a_reproducer_is_named_in_the_record_and_linked_from_the_report(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    pytester.makepyfile(test_reproduced=REPRODUCED_TESTS)
    results = pytester.path / "out" / "results.json"
    pytester.runpytest_subprocess("-p", "conformance.plugin", "-p", "no:cacheprovider", "--impl=torch.utils.checkpoint",
                                  "--variant=reentrant", f"--results={results}")
    [record] = read_results(results).records
    assert record.verdict == "fail" and record.reproducer == "results-reproducers/test_with_a_reproducer_reentrant.py"
    assert (results.parent / record.reproducer).read_text() == "print('the failing call, standalone')\n"
    write_report([results], pytester.path / "page.html")
    [page] = (pytester.path / "page-details").glob("impl-*.html")
    [copy] = (pytester.path / "page-details" / "reproducers").rglob("*.py")
    assert copy.read_text() == "print('the failing call, standalone')\n"
    assert f'href="{copy.relative_to(page.parent).as_posix()}"' in page.read_text()


def test_a_failure_a_known_upstream_bug_explains_carries_it_as_a_field():
    from conformance.data.capabilities import Capabilities
    from conformance.data.expectations import Expectations, judge
    from conformance.data.facts import Facts

    bug = next(b for b in load_known_upstream() if b.bug == RRELU_BUG)
    nodeid = "conformance/suite/test_sweep_ops.py::test_op_matches_uncheckpointed_run[nn.functional.rrelu-float64-sample0-non_reentrant]"
    test = Facts(("api.same-gradients",), "non_reentrant", "cpu")
    expectations = Expectations(known_upstream=(bug,))

    def judged(status):
        return judge(test, nodeid=nodeid, status=status, impl="mine", capabilities=Capabilities(), torch_release="2.13",
                     expectations=expectations)

    assert (judged("fail").upstream.bug, judged("fail").upstream.url) == (RRELU_BUG, bug.url)
    assert judged("pass").upstream is None
