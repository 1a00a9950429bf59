"""The report's blocks for maintainers: the areas × runs summary and the repro commands."""

import shlex

from conformance.data.registry import Clause
from conformance.report import build, render_site
from conformance.report.model import Column
from conformance.report.repro import repro_command, source_location
from conformance.report.summary import area_summary
from conformance.data.results import Facts, Record, Results
from tests.unit.test_report import record

AREAS = {"api": "General API", "rng": "RNG", "empty": "No tests"}
BOTH = ("reentrant", "non_reentrant")
CLAUSES = {
    "api.a": Clause("api.a", "api", "a", "MUST", BOTH, "s", "text", ()),
    "api.b": Clause("api.b", "api", "b", "MUST", BOTH, "s", "text", ()),
    "rng.nr": Clause("rng.nr", "rng", "nr", "MUST", ("non_reentrant",), "s", "text", ()),
    "empty.x": Clause("empty.x", "empty", "x", "MUST", BOTH, "s", "text", ()),
}


def results(impl, *records):
    return Results(header={"implementation": impl, "device": "cpu"},
                   records=[record(f"conformance/suite/test_x.py::test_{c.replace('.', '_')}[{v}]", c, v, o, m)
                            for c, v, o, m in records])


def test_the_summary_counts_passing_clauses_per_area_and_run_and_takes_the_worst_colour():
    matrix = build([("r.json", results("impl", ("api.a", "reentrant", "pass", ""), ("api.b", "reentrant", "timeout", ""),
                                       ("api.a", "non_reentrant", "pass", ""), ("api.b", "non_reentrant", "pass", ""),
                                       ("rng.nr", "non_reentrant", "not_run", "not run: the bound expired")))],
                   clauses=CLAUSES, areas=AREAS)
    assert matrix.columns == [Column("impl", "reentrant", "cpu"), Column("impl", "non_reentrant", "cpu")]
    summary = {area.id: [(c.text, c.worst) for c in cells] for area, cells in area_summary(matrix)}
    assert summary == {"api": [("1/2", "timeout"), ("2/2", "pass")],
                       "rng": [("·", "n/a"), ("0/1", "not_run")]}  # no tested clause in "empty": no row


def test_a_repro_command_is_one_shell_word_per_argument_whatever_the_node_id():
    nodeid = "conformance/suite/test_x.py::test_y[it's $(rm -rf /) `x`]"
    record = Record(nodeid, Facts(["api.a"], "non_reentrant", "cpu"), "fail")
    command = repro_command(record, "my impl")
    assert shlex.split(command) == ["python", "-m", "pytest", "-p", "conformance.plugin", "--pyargs",
                                    "conformance.suite.test_x::test_y[it's $(rm -rf /) `x`]", "--impl=my impl",
                                    "--variant=non_reentrant", "--device=cpu"]


def test_a_repro_command_reruns_the_test_in_the_variant_it_ran_in_whatever_its_failure_is_charged_to():
    """A reentrant test whose nested non-reentrant region failed is charged to non_reentrant (the oracle): its
    rerun still selects the test, which --variant=non_reentrant would deselect."""
    record = Record("conformance/suite/test_oracle.py::test_p[reentrant]", Facts(["api.a"], "non_reentrant", "cpu"), "fail")
    assert "--variant=reentrant" in shlex.split(repro_command(record, "m"))


def test_the_source_is_the_line_of_the_test_function(tmp_path):
    (tmp_path / "t.py").write_text("import x\n\n\ndef helper():\n    pass\n\n\ndef test_y(a):\n    pass\n")
    assert source_location("t.py::test_y[a-b]", tmp_path) == "t.py:8"
    assert source_location("t.py::TestK::test_y", tmp_path) == "t.py:8"
    assert source_location("gone.py::test_y", tmp_path) == "gone.py"
    real = source_location("conformance/suite/test_api.py::test_output_is_the_output_of_running_function_on_args[x]")
    assert real.startswith("conformance/suite/test_api.py:") and real.split(":")[1].isdigit()


def test_the_index_has_the_summary_linking_to_the_matrix_and_the_implementation_page_a_command_per_finding():
    site = render_site(build([("r.json", results("impl", ("api.a", "reentrant", "fail", "boom"),
                                                  ("api.b", "reentrant", "pass", "")))],
                             clauses=CLAUSES, areas=AREAS))
    index, implementation = site["index.html"], site["index-details/impl-impl.html"]
    assert 'id="areas"' in index and 'id="matrix"' not in index
    assert '<a href="index-details/area-api.html#area-api">General API</a>' in index  # the area's clauses × runs
    assert '<a href="index-details/impl-impl.html#area-api">1/2</a>' in index  # the area's clauses on impl's page
    assert implementation.index('id="area-api"') < implementation.index('id="details"')
    causes, details = implementation.split('id="details"')
    assert causes.count('class="command"') == 1 and details.count('class="command"') == 1  # the cause's, the test's
    assert "1 test: <code class=\"signature\">" in causes and implementation.index('id="causes"') < implementation.index('id="details"')
    assert "python -m pytest -p conformance.plugin --pyargs &#39;conformance.suite.test_x::test_api_a[reentrant]&#39; --impl=impl" in implementation
