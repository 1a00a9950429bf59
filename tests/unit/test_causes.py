"""A failure's cause (conformance/data/causes.py), and declarations that hold only for the failure they name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.data.capabilities import Capabilities
from conformance.data.causes import Cause, DifferenceFound, Pattern, causes_of, root
from conformance.data.expectations import Expectations, judge, load_deviations
from conformance.data.facts import Facts
from conformance.data.results import read_results

REPO = Path(__file__).resolve().parents[2]


def test_an_exception_cause_matches_its_type_a_base_and_its_message():
    cause = causes_of(KeyError("no such key 'x'"))[0]
    assert (cause.kind, cause.name) == ("exception", "KeyError") and "LookupError" in cause.bases
    assert Pattern(exception="LookupError", message="no such key").matches(cause)
    assert not Pattern(exception="LookupError", message="^other").matches(cause)
    assert not Pattern(exception="TypeError").matches(cause)
    assert not Pattern(observable="result").matches(cause)


def test_a_difference_carries_its_observable_and_a_group_its_members_causes():
    group = ExceptionGroup("two", [DifferenceFound("gradients", "x: values differ"), ValueError("bad")])
    found = causes_of(group)
    assert [(c.kind, c.name) for c in found] == [("difference", "gradients"), ("exception", "ValueError")]
    assert root(found).name == "ValueError"  # an exception explains what follows it
    assert root(found[:1] + (Cause("difference", "rng", "stream"),)).name == "rng"  # other numbers, other gradients


def test_a_pattern_names_one_kind_and_something_to_match():
    with pytest.raises(ValueError):
        Pattern()
    with pytest.raises(ValueError):
        Pattern(exception="TypeError", observable="result")


def test_signatures_are_alike_for_one_bug_across_inputs():
    a = Cause("exception", "RuntimeError", "tensor at index 3 of 'x' has shape [2, 3], expected [4]")
    b = Cause("exception", "RuntimeError", "tensor at index 7 of 'weight' has shape [5], expected [1, 1]")
    assert a.signature == b.signature
    assert Cause("difference", "gradients", "x: 3 of 4 differ").signature == Cause("difference", "gradients", "lin.weight").signature


def _declared(tmp_path, cause: str | None):
    path = tmp_path / "expectations.toml"
    path.write_text('[[deviation]]\nimpl = ["mypkg", "otherpkg"]\nclauses = ["api.forward-value", "api.same-gradients"]\n'
                    f'reason = "mypkg refuses dict outputs"\n{cause or ""}\n')
    return Expectations(tuple(load_deviations(path)))


def _judged(expectations, *causes):
    facts = Facts(("api.forward-value",), "non_reentrant", "cpu", causes=causes)
    return judge(facts, nodeid="t::test[dict]", status="fail", impl="mypkg", capabilities=Capabilities(),
                 torch_release="2.13", expectations=expectations).expected


def test_a_declaration_explains_only_the_failure_its_cause_names(tmp_path):
    expectations = _declared(tmp_path, 'failure = { exception = "TypeError", message = "dict outputs" }')
    assert _judged(expectations, Cause("exception", "TypeError", "dict outputs are not supported")).kind == "deviation"
    assert _judged(expectations, Cause("difference", "result", "values differ")) is None
    # every cause of one failure must be declared: a declared one does not carry an undeclared one
    assert _judged(expectations, Cause("exception", "TypeError", "dict outputs"), Cause("difference", "rng", "")) is None
    # a declaration that names no failure is rejected: it could hide any failure
    with pytest.raises(ValueError, match="names no failure"):
        _declared(tmp_path, None)


def test_a_second_undeclared_bug_in_a_declared_clause_fails(tmp_path):
    """Item 3 of issue 37: an implementation with a declared deviation (its dict outputs refused) and a second,
    undeclared bug in the same clause (float16 outputs returned as float32) gets a failure for the second bug."""
    expectations = tmp_path / "expectations.toml"
    expectations.write_text('[[deviation]]\nimpl = "tests.broken.two_bugs_one_clause"\nclauses = "api.forward-value"\n'
                            'failure = { exception = "TypeError", message = "dict outputs" }\n'
                            'reason = "refuses dict outputs"\n')
    out = tmp_path / "results.json"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--impl=tests.broken.two_bugs_one_clause",
                    "--variant=non_reentrant", f"--expectations={expectations}", f"--results={out}",
                    "conformance/suite/test_api.py", "-k", "test_output_has_the_functions_type_and_structure or "
                    "test_output_in_every_floating_dtype_is_the_functions"],
                   cwd=REPO, capture_output=True, text=True, timeout=300)
    verdicts = {r.nodeid.split("::")[-1]: (r.verdict, r.message) for r in read_results(out).records}
    assert verdicts["test_output_has_the_functions_type_and_structure[non_reentrant-dict]"][0] == "expected_deviation"
    verdict, message = verdicts["test_output_in_every_floating_dtype_is_the_functions[non_reentrant-float16]"]
    assert verdict == "fail", message
    assert "declared (TypeError /dict outputs/)" in message and "result: " in message
    assert verdicts["test_output_in_every_floating_dtype_is_the_functions[non_reentrant-float32]"][0] == "pass"


def test_a_declaration_by_cause_goes_stale_when_nothing_fails_its_way(tmp_path):
    from conformance.data.expectations import run_level, stale_declarations
    from conformance.data.results import Record, Results

    expectations = _declared(tmp_path, 'failure = { exception = "TypeError", message = "dict outputs" }')
    assert [d.by_cause for d in expectations.deviations] == [True]
    passed = Record("t::test[dict]", Facts(("api.forward-value",), "non_reentrant", "cpu"), "pass")
    failed = Record("t::test[dict]", Facts(("api.forward-value",), "non_reentrant", "cpu",
                                           expected=expectations.deviations[0].expected), "fail")
    header = {"implementation": "mypkg", "torch": "2.13.0"}
    assert stale_declarations(Results(header, [passed]), run_level(expectations)) == list(expectations.deviations)
    assert stale_declarations(Results(header, [passed, failed]), run_level(expectations)) == []


def test_a_difference_made_by_the_random_draws_is_charged_to_the_rng_clauses_whatever_else_the_program_does():
    """Issue 34, item 4: with preserve_rng_state forced off, a program with autograd inside its region differs in
    its forward value and gradients only because the recompute draws other numbers: charged to the rng clauses
    (never gradmode's, whose observable did not differ), its cause the RNG."""
    import importlib

    from conformance import oracle
    from conformance.oracle.program import Program

    mutant = importlib.import_module("tests.mutants.rng.non_reentrant_forces_no_preserve")
    found = oracle.violations(Program("non_reentrant", ops=("linear", "dropout", "inner_grad")), mutant)
    assert found and {v.clause.split(".")[0] for v in found} == {"rng"}
    assert {v.cause.name for v in found} == {"rng"}
    assert not oracle.violations(Program("non_reentrant", ops=("linear", "tanh", "inner_grad")), mutant)


def test_the_implementation_page_groups_one_bug_as_one_cause():
    from conformance.report.model import build
    from conformance.report.render import render_site
    from conformance.data.results import Record, Results

    def failed(nodeid, clause, cause):
        return Record(nodeid, Facts((clause,), "non_reentrant", "cpu", causes=(cause,)), "fail", str(cause))

    records = [failed("a.py::t1", "rng.same-gradients", Cause("difference", "rng", "x: dropout masks differ")),
               failed("b.py::t2", "rng.stream-restored", Cause("difference", "rng", "the stream differs")),
               failed("c.py::t3", "api.forward-value", Cause("exception", "TypeError", "dict outputs at 0x7f3a"))]
    matrix = build([("r.json", Results({"implementation": "mine", "torch": "2.13.0"}, records))])
    groups = matrix.failures_by_cause("mine")
    assert [(len(g.records), list(g.areas)) for g in groups] == [(2, ["rng"]), (1, ["api"])]
    page = render_site(matrix)["index-details/impl-mine.html"]
    assert page.index("one cause, 2 tests") < page.index('id="details"') < page.index('id="skips"')


_VARYING = st.one_of(st.integers(0, 10**6).map(str), st.floats(0, 1e6, allow_nan=False).map(str),
                     st.from_regex(r"'[a-z_.]{0,8}'", fullmatch=True), st.from_regex(r"\[[0-9, ]{0,8}\]", fullmatch=True),
                     st.integers(0, 2**48).map(hex))


@given(words=st.lists(st.from_regex(r"[A-Za-z:;(),!=<>*+.-]{1,10}", fullmatch=True), min_size=1, max_size=12),
       first=st.lists(_VARYING, min_size=12, max_size=12), second=st.lists(_VARYING, min_size=12, max_size=12))
def test_a_described_cause_matches_every_failure_of_its_signature(words, first, second):
    """The pattern the report offers for a cause matches each failure the report groups with it (the same signature:
    the same message but for its numbers, quoted names, index lists and addresses)."""
    def message(values):
        return " ".join(f"{w} {v}" for w, v in zip(words, values))
    one, other = Cause("exception", "RuntimeError", message(first)), Cause("exception", "RuntimeError", message(second))
    pattern = Pattern.describing(one)
    assert pattern.matches(one)
    assert pattern.matches(other) or one.signature != other.signature


def test_the_report_offers_the_declaration_that_makes_a_causes_failures_expected(tmp_path):
    """A cause group's suggested entry, its reason written, explains every failure of the group (consequences of its
    exception included) and nothing of another cause."""
    from conformance.report.model import build
    from conformance.report.render import render_site
    from conformance.data.results import Record, Results

    def failed(nodeid, *causes):
        return Record(nodeid, Facts(("api.forward-value",), "non_reentrant", "cpu", causes=causes), "fail", str(causes[0]))

    raised = [Cause("difference", "exception", f"raises TypeError: iteration over a {n}-dim tensor; the plain run raises nothing", step=0)
              for n in (0, 1)]
    records = [failed("p.py::t[0]", raised[0], Cause("difference", "result", "result: None, the plain run gives a tuple", step=0),
                      Cause("difference", "warnings", "warns ['a warning']; the plain run []", step=0)),
               failed("p.py::t[1]", raised[1], Cause("difference", "warnings", "warns ['a warning']; the plain run []", step=0))]
    other = failed("p.py::t[2]", Cause("difference", "gradients", "x0: values differ", step=1))
    matrix = build([("r.json", Results({"implementation": "mypkg", "torch": "2.13.0"}, [*records, other]))])
    group = next(g for g in matrix.failures_by_cause("mypkg") if len(g.records) == 2)
    entry = group.declaration("mypkg")
    assert entry in render_site(matrix)["index-details/impl-mypkg.html"].replace("&#34;", '"').replace("&#39;", "'")
    path = tmp_path / "expectations.toml"
    path.write_text(entry.replace('reason = ""', 'reason = "traces with proxies"'))
    expectations = Expectations(tuple(load_deviations(path)))
    for record in records:
        assert _judged(expectations, *record.facts.causes).kind == "deviation"
    assert _judged(expectations, *other.facts.causes) is None


def test_what_a_step_that_raised_did_not_produce_is_the_exceptions_consequence():
    from conformance.data.causes import unmatched

    declared = [Pattern(observable="exception", detail="AttributeError")]
    raised = Cause("difference", "exception", "raises AttributeError: x", step=2)
    missing = Cause("difference", "gradient-presence", "x0: None, the plain run gives a gradient", step=2)
    earlier = Cause("difference", "gradients", "x0: values differ", step=1)
    assert unmatched([raised, missing], declared) == []
    assert unmatched([raised, missing, earlier], declared) == [earlier]  # a wrong gradient before it is a cause of its own


def test_a_failed_steps_consequences_are_not_causes_of_their_own_but_later_state_is():
    """An exception the declaration names leaves its step's result, gradients and hooks unproduced, and the later
    steps of the program run on what it did not produce (a backward of the None it returned raises): those are its
    consequences. A difference of state at a later step (the RNG stream) is a cause of its own."""
    from conformance.data.causes import unmatched

    raised = Cause("difference", "exception", "raises TypeError: boom; the plain run raises nothing", step=3)
    consequences = [Cause("difference", "result", "result: None", step=3), Cause("difference", "hooks", "fires", step=3),
                    Cause("difference", "rng", "the global RNG stream differs", step=3),
                    Cause("difference", "exception", "raises RuntimeError: element 0 of tensors", step=4),
                    Cause("difference", "gradient-presence", "x0: None", step=4)]
    earlier = Cause("difference", "gradients", "x0 differs", step=2)
    later_state = Cause("difference", "rng", "the global RNG stream differs", step=5)
    patterns = [Pattern(observable="exception", detail="TypeError: boom")]
    assert unmatched([raised, *consequences], patterns) == []
    assert unmatched([earlier, raised, *consequences, later_state], patterns) == [earlier, later_state]


def _a_breakage_and_a_deviation(tmp_path):
    """mypkg's row breakage (a TypeError) and its deviation of api.forward-value (a lifetime), each naming one cause."""
    from conformance.data.expectations import load_breakages

    path = tmp_path / "expectations.toml"
    path.write_text('[[breakage]]\nimpl = "mypkg"\nfailure = { exception = "TypeError", message = "cannot save" }\n'
                    'reason = "saves every argument"\n\n'
                    '[[deviation]]\nimpl = "mypkg"\nclauses = "api.forward-value"\nfailure = { observable = "lifetimes" }\n'
                    'reason = "keeps its output alive"\n')
    return Expectations(tuple(load_deviations(path)), tuple(load_breakages(path)))


def test_a_failure_is_explained_by_every_declaration_covering_it_together(tmp_path):
    """A row's breakage names one cause and a clause's deviation another: a failure showing both is expected (the
    root cause's declaration gives the reason); one showing a third cause is not."""
    expectations = _a_breakage_and_a_deviation(tmp_path)
    both = _judged(expectations, Cause("exception", "TypeError", "cannot save an int"), Cause("difference", "lifetimes", "out"))
    assert both.kind == "deviation" and "saves every argument" in both.reason
    assert _judged(expectations, Cause("exception", "TypeError", "cannot save"), Cause("difference", "rng", "")) is None


def test_a_declaration_naming_one_cause_of_a_failure_explained_together_is_not_stale(tmp_path):
    """A program's failure shows two causes, each declared by its own entry; the other entry's reason is the failure's
    (its cause is the root): the entry naming the second cause still describes the row, it is not stale."""
    from conformance.data.expectations import run_level, stale_declarations
    from conformance.data.results import Record, Results

    expectations = _a_breakage_and_a_deviation(tmp_path)
    causes = (Cause("exception", "TypeError", "cannot save an int"), Cause("difference", "lifetimes", "out"))
    both = Record("t::test[dict]", Facts(("api.forward-value",), "non_reentrant", "cpu", causes=causes,
                                         expected=_judged(expectations, *causes)), "fail")
    only_the_root = Record("t::test[dict]", Facts(("api.forward-value",), "non_reentrant", "cpu", causes=causes[:1],
                                                  expected=_judged(expectations, *causes[:1])), "fail")
    header = {"implementation": "mypkg", "torch": "2.13.0"}
    assert stale_declarations(Results(header, [both]), run_level(expectations)) == []
    assert stale_declarations(Results(header, [only_the_root]), run_level(expectations)) == list(expectations.deviations)


def test_a_declaration_is_not_stale_in_a_run_of_a_variant_its_row_does_not_claim(tmp_path):
    from conformance.data.expectations import run_level, stale_declarations
    from conformance.data.facts import Expected
    from conformance.data.results import Record, Results

    expectations = _declared(tmp_path, 'failure = { exception = "TypeError", message = "dict outputs" }')
    unclaimed = Record("t::test[dict]", Facts(("api.forward-value",), "reentrant", "cpu",
                                              expected=Expected("unsupported", "mypkg does not claim reentrant")), "fail")
    assert stale_declarations(Results({"implementation": "mypkg"}, [unclaimed]), run_level(expectations)) == []


def test_any_failure_is_a_rows_breakage_never_a_clauses_deviation(tmp_path):
    from conformance.data.expectations import load_breakages

    assert Pattern.parse("any")[0].matches(Cause("difference", "gradients", "x0 differs"))
    path = tmp_path / "expectations.toml"
    path.write_text('[[breakage]]\nimpl = "mypkg"\nfailure = "any"\nreason = "rewrites its inputs"\n')
    assert [b.failure for b in load_breakages(path)] == [Pattern.parse("any")]
    path.write_text('[[deviation]]\nimpl = "mypkg"\nclauses = "api.forward-value"\nfailure = "any"\nreason = "r"\n')
    with pytest.raises(ValueError, match="breakage"):
        load_deviations(path)
