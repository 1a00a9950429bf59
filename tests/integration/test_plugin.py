"""The plugin's options, its errors, clause checks, verdict marks and the results file."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.data.results import read_results
from conformance.data.vocabulary import OUTPUT_DIR

REPO = Path(__file__).resolve().parents[2]

# A tiny conformance test file: one clause binding both variants, one binding only reentrant.
SAMPLE_TESTS = """
import pytest

@pytest.mark.clause("api.forward-value")
def test_both(ckpt):
    assert ckpt.checkpoint(lambda t: t * 2, __import__("torch").ones(2)).tolist() == [2.0, 2.0]

@pytest.mark.clause("gradapi.reentrant-rejects-grad")
def test_reentrant_only(ckpt):
    assert ckpt.use_reentrant
"""


def run_pytest(*args):
    """pytest in a fresh process from the repo root, as a user would type it."""
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=REPO, capture_output=True, text=True, timeout=600)


def inner(pytester, *args):
    """pytest in a subprocess inside the pytester directory (torch cannot be re-imported in-process),
    with the plugin loaded as a source checkout loads it."""
    return pytester.runpytest_subprocess("-p", "conformance.plugin", "-p", "no:cacheprovider", *args, timeout=300)


@pytest.fixture
def suite(pytester, monkeypatch):
    """A pytester directory laid out as the plugin's suite: its conftest, and the plugin told where it is."""
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    suite_dir = pytester.mkpydir("suite")
    (suite_dir / "conftest.py").write_text((REPO / "conformance/suite/conftest.py").read_text())
    pytester.makeconftest("""
        from pathlib import Path
        import conformance.plugin
        conformance.plugin.SUITE_DIR = Path(__file__).parent / "suite"
    """)
    return suite_dir


def write_module(directory, name, source):
    path = Path(directory) / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


@pytest.mark.parametrize(
    "option, expected",
    [
        ("--impl=does.not.exist", "cannot import module 'does.not.exist'"),
        ("--impl=json", "lacks checkpoint, checkpoint_sequential"),
        ("--clause=no.such", "unknown clause"),
        ("--clause=rng.stream-restord", "unknown clause or area id(s): 'rng.stream-restord' (did you mean 'rng.stream-restored'?)"),
        ("--clause=rgn", "'rgn' (did you mean 'rng'?)"),
    ],
)
def test_bad_input_is_a_one_line_usage_error(option, expected):
    result = run_pytest(option, "--collect-only", "-q")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1 and expected in errors[0], result.stderr
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize("option", ["--variant=sideways", "--device=tpu"])
def test_unknown_variant_or_device_is_a_usage_error(option):
    result = run_pytest(option, "--collect-only", "-q")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "invalid choice" in result.stderr and "Traceback" not in result.stderr


def test_variant_parametrization_follows_the_clause(pytester, suite):
    write_module(suite, "test_sample", SAMPLE_TESTS)
    result = inner(pytester, "--impl=torch.utils.checkpoint", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["*test_both[[]reentrant[]]", "*test_both[[]non_reentrant[]]", "*test_reentrant_only[[]reentrant[]]"])
    assert "test_reentrant_only[non_reentrant]" not in result.stdout.str()


def test_variant_option_deselects_tests_of_clauses_that_do_not_bind_it(pytester, suite):
    write_module(suite, "test_sample", SAMPLE_TESTS)
    result = inner(pytester, "--impl=torch.utils.checkpoint", "--variant=non_reentrant")
    result.assert_outcomes(passed=1, deselected=2)


def test_unknown_clause_id_fails_collection(pytester, suite):
    write_module(suite, "test_bad", """
        import pytest
        @pytest.mark.clause("no.such-clause")
        def test_x(ckpt): pass
    """)
    result = inner(pytester, "--impl=torch.utils.checkpoint")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*unknown clause id(s)*no.such-clause*"])


def test_suite_test_without_clause_fails_collection(pytester, suite):
    write_module(suite, "test_unmarked", "def test_x(): pass\n")
    result = inner(pytester, "--impl=torch.utils.checkpoint")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*every conformance test needs @pytest.mark.clause*"])


def test_clause_option_selects_by_clause_and_area(pytester, suite):
    write_module(suite, "test_sample", SAMPLE_TESTS)
    by_clause = inner(pytester, "--impl=torch.utils.checkpoint", "--clause=api.forward-value")
    by_clause.assert_outcomes(passed=2, deselected=1)
    by_area = inner(pytester, "--impl=torch.utils.checkpoint", "--clause=gradapi")
    by_area.assert_outcomes(passed=1, deselected=2)


def test_untested_clauses_are_listed_in_the_summary(pytester, suite):
    write_module(suite, "test_sample", SAMPLE_TESTS)
    result = inner(pytester, "--impl=torch.utils.checkpoint")
    result.stdout.fnmatch_lines(["*clauses with no test*", "*api.same-gradients*"])
    assert "api.forward-value," not in result.stdout.str().split("clauses with no test")[1]


def test_only_the_selected_clauses_that_got_no_test_are_listed(pytester, suite):
    """Issue 23: a run of one test file, or of some clauses, does not list every other clause as untested."""
    write_module(suite, "test_sample", SAMPLE_TESTS)
    write_module(suite, "test_other", SAMPLE_TESTS.replace("def test_", "def test_other_"))
    one_file = inner(pytester, "--impl=torch.utils.checkpoint", str(suite / "test_sample.py"))
    assert "clauses with no test" not in one_file.stdout.str()
    some_clauses = inner(pytester, "--impl=torch.utils.checkpoint", "--clause=gradapi")
    listed = some_clauses.stdout.str().split("clauses with no test")[1].splitlines()[1]
    assert "gradapi.non-reentrant-grad" in listed and "api.same-gradients" not in listed
    assert "gradapi.reentrant-rejects-grad" not in listed  # it has a test


def test_results_file_has_header_and_one_record_per_test(pytester, suite, tmp_path):
    write_module(suite, "test_sample", SAMPLE_TESTS)
    out = tmp_path / "out" / "torch.json"
    inner(pytester, "--impl=torch.utils.checkpoint", f"--results={out}").assert_outcomes(passed=3)
    results = read_results(out)
    for key in ("implementation", "implementation_version", "torch", "python", "device", "harness", "hypothesis"):
        assert key in results.header, key
    assert results.header["implementation"] == "torch.utils.checkpoint"
    assert sorted((r.variant, r.status) for r in results.records) == [
        ("non_reentrant", "pass"), ("reentrant", "pass"), ("reentrant", "pass")]
    assert {tuple(r.clauses) for r in results.records} == {("api.forward-value",), ("gradapi.reentrant-rejects-grad",)}
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".")] == [], "a temporary file was left"
    events = [json.loads(line)["event"] for line in out.with_suffix(".jsonl").read_text().splitlines()]
    assert events == ["start", "record"] * 3


def _impl_module(directory, name, capabilities=None, broken=False):
    body = "from torch.utils.checkpoint import checkpoint_sequential, CheckpointError\n"
    body += "from torch.utils.checkpoint import checkpoint as _checkpoint\n"
    body += f"__conformance__ = {{'capabilities': {capabilities!r}}}\n" if capabilities else ""
    body += "def checkpoint(fn, *args, **kwargs):\n"
    body += "    out = _checkpoint(fn, *args, **kwargs)\n"
    body += "    return out + 1 if {} else out\n".format(broken)
    write_module(directory, name, body)


def test_unclaimed_variant_is_unsupported_not_failed(pytester, suite, tmp_path):
    write_module(suite, "test_sample", SAMPLE_TESTS)
    _impl_module(pytester.path, "nr_only", {"variants": ["non_reentrant"]}, broken=True)
    out = tmp_path / "r.json"
    inner(pytester, "--impl=nr_only", f"--results={out}")
    records = read_results(out).records
    verdicts = {(r.nodeid.split("::")[1], r.verdict) for r in records}
    # broken everywhere: the claimed variant fails, the unclaimed one is "unsupported";
    # the reentrant-only test passes although unclaimed: "unclaimed but working".
    assert verdicts == {("test_both[non_reentrant]", "fail"), ("test_both[reentrant]", "unsupported"),
                        ("test_reentrant_only[reentrant]", "unclaimed_pass")}
    # what happened stays apart from what was expected
    assert {(r.nodeid.split("::")[1], r.status, r.expected and r.expected.kind) for r in records} == {
        ("test_both[non_reentrant]", "fail", None), ("test_both[reentrant]", "fail", "unsupported"),
        ("test_reentrant_only[reentrant]", "pass", "unsupported")}


def test_declared_deviation_is_expected_and_a_vanished_one_fails(pytester, suite, tmp_path):
    write_module(suite, "test_sample", SAMPLE_TESTS)
    _impl_module(pytester.path, "off_by_one", broken=True)
    expectations = tmp_path / "expectations.toml"
    expectations.write_text(textwrap.dedent("""
        [[deviation]]
        impl = "off_by_one"
        clauses = "api.forward-value"
        variant = "reentrant"
        failure = { exception = "AssertionError" }
        reason = "adds one"
        [[deviation]]
        impl = "off_by_one"
        clauses = "gradapi.reentrant-rejects-grad"
        test = "test_reentrant_only"
        failure = { exception = "AssertionError" }
        reason = "claimed wrongly: this test passes"
    """))
    out = tmp_path / "r.json"
    inner(pytester, "--impl=off_by_one", f"--expectations={expectations}", f"--results={out}")
    records = {r.nodeid.split("::")[1]: r for r in read_results(out).records}
    assert records["test_both[reentrant]"].verdict == "expected_deviation"
    assert records["test_both[reentrant]"].status == "fail" and records["test_both[reentrant]"].expected.reason == "adds one"
    assert records["test_both[non_reentrant]"].verdict == "fail"
    fixed = records["test_reentrant_only[reentrant]"]
    assert (fixed.status, fixed.verdict) == ("pass", "fixed_deviation")
    assert "deviation did not occur" in fixed.message


def test_cuda_tests_skip_with_a_reason_without_cuda(pytester, suite):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the skip path cannot be observed here")
    write_module(suite, "test_dev", """
        import pytest
        @pytest.mark.clause("rng.device-states")
        def test_x(ckpt, device): pass
    """)
    result = inner(pytester, "--impl=torch.utils.checkpoint", "--variant=reentrant", "--device=all", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*CUDA is not available*"])
    by_default = inner(pytester, "--impl=torch.utils.checkpoint", "--variant=reentrant")  # the devices present
    by_default.assert_outcomes(passed=1)


def test_one_implementation_has_one_id_whatever_spelling_selected_it(tmp_path):
    """An adapter's short name and its module path are the same implementation: same id, same
    declared deviations (torch_composable's debug deviations), same verdicts, one report column."""
    results = {}
    for spelling in ("torch_composable", "conformance.adapters.torch_composable"):
        out = tmp_path / f"{spelling}.json"
        run_pytest(f"--impl={spelling}", "--clause=debug", "-p", "no:cacheprovider", f"--results={out}")
        results[spelling] = read_results(out)
    short, long = results.values()
    assert short.header["implementation"] == long.header["implementation"] == "torch_composable"
    verdicts = [sorted((r.nodeid, r.status, r.verdict) for r in res.records) for res in (short, long)]
    assert verdicts[0] == verdicts[1]
    assert any(v == "expected_deviation" for _, _, v in verdicts[0]), "the declared deviations must apply"
    from conformance.report import build

    assert build([("a.json", short), ("b.json", long)]).implementations == ["torch_composable"]


MINIMAL_MODULE = """
# Only the two required functions; correct in what they do (they are the reference's).
from reference_impl import checkpoint, checkpoint_sequential
"""


def _deviations_of(impl, as_impl, path):
    """The declared deviations of ``impl`` (expectations.toml), declared again for ``as_impl``."""
    import tomllib

    entries = tomllib.loads((REPO / "conformance/data/expectations.toml").read_text())["deviation"]
    lines = []
    for entry in (e for e in entries if e["impl"] == impl):
        lines.append("[[deviation]]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in {**entry, "impl": as_impl}.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_what_the_implementation_notes_during_a_test_goes_with_its_result(tmp_path):
    """The optional ``notes`` hook of the protocol (the compiled rows note graph breaks): each record carries
    what was noted during its test's call, and nothing noted before it (at import, in another test)."""
    out = tmp_path / "notes.json"
    # Not the oracle's tests: their generated programs nest checkpoints of both variants in one test.
    run_pytest("--impl=tests.broken.notes_every_call", "--clause=api.forward-value", "--variant=non_reentrant",
               "-k", "not test_oracle", "-p", "no:cacheprovider", f"--results={out}")
    records = [r for r in read_results(out).records if r.status == "pass"]
    assert records and all(r.notes for r in records)
    assert {n for r in records for n in r.notes} == {"checkpoint called with use_reentrant=False"}


FAILING_TESTS = """
import pytest

from conformance.suite.conftest import reproducer  # noqa: F401


@pytest.mark.clause("api.forward-value")
def test_first(ckpt, reproducer):
    reproducer("print('standalone')\\n")
    assert False, "the first value differs"

@pytest.mark.clause("api.forward-value")
def test_second(ckpt):
    assert False, "the second value differs"

@pytest.mark.clause("gradapi.reentrant-rejects-grad")
def test_passes(ckpt):
    pass
"""


def test_a_run_ends_with_its_failures_by_cause_and_writes_reproducers_into_the_output_folder(pytester, suite):
    """Issue 45: one bug failing many tests reads as one cause (the clauses, areas and runs it reaches, its simplest
    test and its message, a rerun command, the reproducer); without --results a reproducer script goes into the
    output folder (reports/, git ignores it). With more than one test, each traceback is a line and pytest's list
    of FAILED tests is left out."""
    write_module(suite, "test_failing", FAILING_TESTS)
    result = inner(pytester, "--impl=torch.utils.checkpoint", "--variant=reentrant")
    result.assert_outcomes(passed=1, failed=2)
    summary = result.stdout.str().split("failures by cause")[1].splitlines()[1:10]
    first = "suite/test_failing.py::test_first[reentrant]"
    assert summary[0].startswith("2 cause(s) of 2 failed test(s)")
    assert summary[2:8] == ["✗ AssertionError: the first value differs: 1 test(s), fail",
                            "    clauses: api.forward-value", "    areas: api · runs: reentrant · cpu",
                            f"    simplest test: {first}", "      AssertionError: the first value differs",
                            "    rerun: python -m pytest -p conformance.plugin --pyargs "
                            "'conformance.suite.test_failing::test_first[reentrant]' --impl=torch.utils.checkpoint "
                            "--variant=reentrant --device=cpu"]
    assert summary[8] == f"    reproducer: python {OUTPUT_DIR}/reproducers/torch.utils.checkpoint/test_first_reentrant.py"
    assert "short test summary" not in result.stdout.str() and "FAILED" not in result.stdout.str()
    script = pytester.path / OUTPUT_DIR / "reproducers" / "torch.utils.checkpoint" / "test_first_reentrant.py"
    assert script.read_text() == "print('standalone')\n"
