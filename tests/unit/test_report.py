"""The HTML report: verdict aggregation, percentages, the baseline diff, escaping, the command line, the
index and its detail pages."""

import html.parser
import json
import os
import stat
from dataclasses import replace

import pytest

from conformance.__main__ import main
from conformance.data.registry import Clause, load_areas, load_clauses
from conformance.report import _load, build, compare, render_site
from conformance.report.layout import Layout
from conformance.report.model import NA, NOT_RUN, Column
from conformance.report.render import environment
from conformance.data.results import Expected, Facts, Record, Results, write_results
from conformance.data.vocabulary import SEVERITY, worst

MARKUP = "<script>alert(1)</script><b>bold</b> & \"quoted\""

AREAS = {"api": "General API", "rng": "RNG"}
CLAUSES = {
    "api.value": Clause("api.value", "api", "value", "MUST", ("reentrant", "non_reentrant"), "s", "text", ()),
    "api.grads": Clause("api.grads", "api", "grads", "MUST", ("reentrant", "non_reentrant"), "s", "text", ()),
    "api.should": Clause("api.should", "api", "should", "SHOULD", ("reentrant", "non_reentrant"), "s", "text", ()),
    "rng.only-nr": Clause("rng.only-nr", "rng", "non-reentrant only", "MUST", ("non_reentrant",), "s", "text", ()),
    "rng.untested": Clause("rng.untested", "rng", "no test", "MUST", ("reentrant", "non_reentrant"), "s", "text", ()),
}


# A verdict that folds an expectation in, as the (status, expected kind) a run records for it.
AS_RECORDED = {"expected_deviation": ("fail", "deviation"), "fixed_deviation": ("pass", "deviation"),
               "unsupported": ("fail", "unsupported"), "unclaimed_pass": ("pass", "unsupported")}


def record(nodeid, clause, variant, verdict, message=""):
    status, kind = AS_RECORDED.get(verdict, (verdict, None))
    return Record(nodeid, Facts([clause], variant, "cpu", expected=Expected(kind, "declared") if kind else None), status, message)


def results(impl, *records, device="cpu", **header):
    """Results of one run; records are (clause, variant, verdict[, message])."""
    recs = [record(f"t.py::test_{i}[{variant}]", clause, variant, verdict, *rest)
            for i, (clause, variant, verdict, *rest) in enumerate(records)]
    return Results(header={"implementation": impl, "device": device, "variant": "both", **header}, records=recs)


def matrix_of(*runs):
    return build([(f"run{i}.json", r) for i, r in enumerate(runs)], clauses=CLAUSES, areas=AREAS)


@pytest.mark.parametrize("outcomes, expected", [
    (["pass", "pass"], "pass"),
    (["pass", "skip"], "skip"),
    (["pass", "unclaimed_pass"], "unclaimed_pass"),
    (["pass", "fail", "crash"], "fail"),
    (["timeout", "crash"], "crash"),
    (["error", "timeout"], "timeout"),
    (["expected_deviation", "error"], "error"),
    (["expected_deviation", "unsupported", "pass"], "unsupported"),
])
def test_a_cell_takes_the_worst_outcome_of_its_tests(outcomes, expected):
    assert worst(outcomes) == expected


def test_the_severity_order_is_the_documented_one():
    assert SEVERITY[:4] == ("fail", "crash", "timeout", "error") and SEVERITY[-2:] == ("pass", "n/a")


def test_cells_are_n_a_where_the_clause_does_not_bind_the_variant_and_not_run_without_records():
    m = matrix_of(results("impl", ("api.value", "reentrant", "pass"), ("api.value", "non_reentrant", "fail"),
                          ("api.value", "non_reentrant", "pass"), ("rng.only-nr", "non_reentrant", "skip")))
    r, nr = Column("impl", "reentrant", "cpu"), Column("impl", "non_reentrant", "cpu")
    assert m.columns == [r, nr]
    assert m.cell("api.value", r).verdict == "pass" and m.cell("api.value", nr).verdict == "fail"
    assert m.cell("api.value", nr).counts == [("fail", 1), ("pass", 1)]
    assert m.cell("rng.only-nr", r).verdict == NA and m.cell("rng.only-nr", nr).verdict == "skip"
    assert m.cell("api.grads", r).verdict == NOT_RUN
    assert [row.clause.id for row in m.rows if not row.tested] == ["api.grads", "api.should", "rng.untested"]


def test_columns_come_from_the_run_device_and_the_records_variants():
    cuda = results("impl", ("api.value", "reentrant", "pass"), device="cuda")
    both = results("impl", ("api.value", "non_reentrant", "pass"), device="all")
    other = results("other", ("api.value", "reentrant", "pass"))
    m = matrix_of(other, cuda, both)
    assert m.columns == [Column("other", "reentrant", "cpu"), Column("impl", "reentrant", "cuda"),
                         Column("impl", "non_reentrant", "cpu")]
    assert m.implementations == ["other", "impl"]


def test_clause_ids_unknown_to_the_registry_get_rows_of_their_own():
    m = matrix_of(results("impl", ("gone.clause", "reentrant", "fail")))
    assert [a.id for a in m.areas][-1] == "unregistered"
    assert m.cell("gone.clause", Column("impl", "reentrant", "cpu")).verdict == "fail"


def test_percentages_count_applicable_must_clauses_only():
    m = matrix_of(results(
        "impl",
        ("api.value", "reentrant", "pass"), ("api.value", "non_reentrant", "pass"),
        ("api.grads", "reentrant", "pass"), ("api.grads", "non_reentrant", "crash"),
        ("api.should", "reentrant", "fail"),  # SHOULD: never counted
        ("rng.only-nr", "non_reentrant", "skip"),  # skipped: not applicable here
    ))
    r, nr = Column("impl", "reentrant", "cpu"), Column("impl", "non_reentrant", "cpu")
    assert (m.column_score(r).conforming, m.column_score(r).applicable) == (2, 2)
    assert (m.column_score(nr).conforming, m.column_score(nr).applicable) == (1, 2)
    score = m.implementation_score("impl")  # api.grads crashes in one column: it does not conform
    assert (score.conforming, score.applicable, round(score.percent)) == (1, 2, 50)


@pytest.mark.parametrize("verdict, counted", [
    ("expected_deviation", True), ("error", True), ("timeout", True),
    ("unsupported", False), ("unclaimed_pass", False), ("skip", False),
])
def test_which_verdicts_make_a_must_clause_applicable(verdict, counted):
    m = matrix_of(results("impl", ("api.value", "reentrant", verdict)))
    score = m.column_score(Column("impl", "reentrant", "cpu"))
    assert (score.conforming, score.applicable) == (0, int(counted))


def test_the_diff_lists_cells_whose_verdict_changed():
    old = matrix_of(results("impl", ("api.value", "reentrant", "pass"), ("api.grads", "reentrant", "fail"),
                            ("api.value", "non_reentrant", "pass")))
    new = matrix_of(results("impl", ("api.value", "reentrant", "crash"), ("api.grads", "reentrant", "pass")),
                    results("new", ("api.value", "reentrant", "pass")))
    diff = compare(old, new)
    changes = {(c.clause, c.old, c.new, c.direction) for c in diff.changes}
    assert changes == {("api.value", "pass", "crash", "worse"), ("api.grads", "fail", "pass", "better")}
    assert diff.new_columns == [Column("new", "reentrant", "cpu")]
    assert diff.dropped_columns == [Column("impl", "non_reentrant", "cpu")]


class Page(html.parser.HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.tags, self.attrs, self.chunks = [], [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs

    def handle_data(self, data):
        self.chunks.append(data)


def test_autoescape_is_on():
    assert environment().autoescape is True


@pytest.fixture
def hostile_site():
    hostile = results(MARKUP, ("api.value", "reentrant", "fail", MARKUP), platform=MARKUP, note={"x": MARKUP})
    hostile.records[0].nodeid = f"t.py::test[{MARKUP}]"
    return render_site(matrix_of(hostile), compare(matrix_of(hostile), matrix_of(hostile)))


def test_text_from_results_is_escaped_everywhere_and_every_page_is_self_contained(hostile_site):
    assert set(hostile_site) == {"index.html", "index-details/impl-script-alert-1-script-b-bold-b-quoted.html",
                                 "index-details/area-api.html", "index-details/changes.html"}
    for html_text in hostile_site.values():
        page = Page(html_text)
        assert set(page.tags) <= {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4",
                                  "p", "section", "div", "span", "details", "summary", "em", "ul", "li", "dl", "dt", "dd",
                                  "table", "thead", "tbody", "tr", "th", "td", "code", "small", "blockquote", "a", "pre",
                                  "article", "main"}
        assert "script" not in page.tags and "b" not in page.tags and "link" not in page.tags
        assert all(value is None or not value.startswith(("http:", "https:", "//")) for _, value in page.attrs)
        assert not any(name == "src" or name.startswith("on") for name, _ in page.attrs)
    implementation = Page(hostile_site["index-details/impl-script-alert-1-script-b-bold-b-quoted.html"])
    assert "".join(implementation.chunks).count(MARKUP) >= 4  # implementation name, message, test id, environment


def test_a_clause_source_is_a_link_to_its_page_or_names_the_docstring():
    """The only link out of the report: a clause's source, to its public page (issue 34, item 3)."""
    page_source = "https://pytorch.org/docs/2.1/checkpoint.html"
    clauses = {"api.value": replace(CLAUSES["api.value"], source=page_source, text_kind="quote"),
               "rng.only-nr": replace(CLAUSES["rng.only-nr"], source="docstring:torch==2.13.0:torch.utils.checkpoint.checkpoint")}
    run = results("impl", ("api.value", "reentrant", "pass"), ("rng.only-nr", "non_reentrant", "pass"))
    site = render_site(build([("run.json", run)], clauses=clauses, areas=AREAS))
    area = Page(site["index-details/area-api.html"])
    assert ("href", page_source) in area.attrs and ("rel", "external") in area.attrs
    assert page_source in "".join(area.chunks)
    rng = " ".join("".join(Page(site["index-details/area-rng.html"]).chunks).split())
    assert "torch 2.13.0 docstring of torch.utils.checkpoint.checkpoint" in rng and "docstring:" not in rng
    external = [value for text in site.values() for name, value in Page(text).attrs
                if name == "href" and value.startswith(("http:", "https:", "//"))]
    assert set(external) == {page_source}


def test_report_command_writes_the_index_and_its_detail_pages_beside_it(tmp_path, capsys):
    write_results(tmp_path / "a.json", results("impl", ("api.forward-value", "reentrant", "fail", MARKUP)))
    write_results(tmp_path / "old.json", results("impl", ("api.forward-value", "reentrant", "pass")))
    out = tmp_path / "site" / "compatibility.html"
    assert main(["report", str(tmp_path / "a.json"), "-o", str(out), "--baseline", str(tmp_path / "old.json")]) == 0
    assert 'data-changes="1"' in out.read_text()
    details = tmp_path / "site" / "compatibility-details"
    assert sorted(p.name for p in details.iterdir()) == ["area-api.html", "changes.html", "impl-impl.html"]
    implementation = (details / "impl-impl.html").read_text()
    assert 'data-verdict="fail"' in implementation and "&lt;script&gt;" in implementation
    for page in (out, *details.iterdir()):
        assert stat.S_IMODE(os.stat(page).st_mode) & 0o044, f"{page} is readable by others (a web server)"


def test_a_second_report_into_the_same_place_removes_the_pages_it_no_longer_has(tmp_path):
    write_results(tmp_path / "results" / "a.json", results("a", ("api.forward-value", "reentrant", "pass")))
    write_results(tmp_path / "results" / "b.json", results("b", ("api.forward-value", "reentrant", "pass")))
    out = tmp_path / "site" / "index.html"
    assert main(["report", str(tmp_path / "results"), "-o", str(out)]) == 0
    (tmp_path / "results" / "b.json").unlink()
    (tmp_path / "site" / "index-details" / "notes.txt").write_text("not the report's")
    assert main(["report", str(tmp_path / "results"), "-o", str(out)]) == 0
    assert sorted(p.name for p in (tmp_path / "site" / "index-details").iterdir()) == [
        "area-api.html", "impl-a.html", "notes.txt"]


def test_report_command_rejects_a_file_that_is_not_results(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": 1, "records": []}))
    assert main(["report", str(bad), "-o", str(tmp_path / "x.html")]) == 2
    assert "not a conformance results file" in capsys.readouterr().err


def test_observed_clauses_count_as_torch_compatibility_not_conformance():
    clauses = {**CLAUSES, "api.observed": Clause("api.observed", "api", "what torch does", "OBSERVED",
                                                 ("reentrant", "non_reentrant"), "s", "text", ())}
    run = results("impl", ("api.value", "reentrant", "pass"), ("api.observed", "reentrant", "fail"))
    m = build([("r.json", run)], clauses=clauses, areas=AREAS)
    assert (m.implementation_score("impl").conforming, m.implementation_score("impl").applicable) == (1, 1)
    observed = m.implementation_score("impl", "OBSERVED")
    assert (observed.conforming, observed.applicable) == (0, 1)
    assert "like torch on 0 of 1 undocumented behaviours" in render_site(m)["index.html"]


def test_the_sweeps_view_lists_only_the_names_where_a_run_deviates():
    def sweep(name, variant, verdict, kind="ops"):
        return record(f"conformance/suite/test_sweep_{kind}.py::test_x[{name}-float64-sample0-{variant}]",
                      "api.value", variant, verdict, "gradients differ")

    run = Results(header={"implementation": "impl", "device": "cpu"}, records=[
        sweep("nn.functional.rrelu", "non_reentrant", "expected_deviation"), sweep("nn.functional.rrelu", "reentrant", "pass"),
        sweep("add", "reentrant", "pass"), sweep("add", "non_reentrant", "skip"),
        sweep("nn.BatchNorm1d", "reentrant", "fail", kind="modules")])
    m = build([("r.json", run)], clauses=CLAUSES, areas=AREAS)
    site = render_site(m)
    assert "2 ops and 1 modules swept, 2 deviate" in site["index.html"]
    # per run, the names that do not deviate / the names swept: reentrant swept all 3 (BatchNorm1d fails),
    # non_reentrant swept rrelu and add (rrelu deviates as declared, add was skipped)
    assert 'data-sweep-worst="fail" title="worst: fail">2/3<' in site["index.html"]
    assert 'data-sweep-worst="expected_deviation" title="worst: deviation">1/2<' in site["index.html"]
    sweeps = site["index-details/sweeps.html"]
    assert 'data-swept="nn.functional.rrelu"' in sweeps and 'data-swept="nn.BatchNorm1d"' in sweeps
    assert 'data-swept="add"' not in sweeps


def test_runs_on_another_torch_release_get_columns_of_their_own():
    usual = [results("torch.utils.checkpoint", ("api.value", "reentrant", "pass"), torch="2.13.0+cpu")
             for _ in range(2)]
    old = results("torch.utils.checkpoint", ("api.value", "reentrant", "fail"), torch="2.6.0+cu124")
    m = build([("a.json", usual[0]), ("b.json", usual[1]), ("c.json", old)], clauses=CLAUSES, areas=AREAS)
    assert m.implementations == ["torch.utils.checkpoint", "torch.utils.checkpoint @ torch 2.6"]
    assert m.cell("api.value", Column("torch.utils.checkpoint @ torch 2.6", "reentrant", "cpu")).verdict == "fail"


def test_one_implementation_on_three_releases_keeps_three_sets_of_columns(tmp_path):
    # As tox lays them out: the same file name under builtin/ and under each release's folder.
    for folder, torch in (("builtin", "2.13.0+cpu"), ("releases/torch-2.14.1", "2.14.1+cu130"),
                          ("releases/torch-2.6.0", "2.6.0+cu124")):
        (tmp_path / folder).mkdir(parents=True)
        write_results(tmp_path / folder / "torch.utils.checkpoint-reentrant-cpu.json",
                      results("torch.utils.checkpoint", ("api.value", "reentrant", "pass"), torch=torch))
    write_results(tmp_path / "builtin" / "reference_impl-reentrant-cpu.json",
                  results("reference_impl", ("api.value", "reentrant", "pass"), torch="2.13.0+cpu"))
    m = build(_load(sorted(tmp_path.rglob("*.json"))), clauses=CLAUSES, areas=AREAS)
    assert sorted(m.implementations) == ["reference_impl", "torch.utils.checkpoint",
                                         "torch.utils.checkpoint @ torch 2.14", "torch.utils.checkpoint @ torch 2.6"]
    assert sorted(run.source for run in m.runs) == [
        "builtin/reference_impl-reentrant-cpu.json", "builtin/torch.utils.checkpoint-reentrant-cpu.json",
        "releases/torch-2.14.1/torch.utils.checkpoint-reentrant-cpu.json",
        "releases/torch-2.6.0/torch.utils.checkpoint-reentrant-cpu.json"]


def test_a_cell_is_skipped_only_when_every_test_of_it_was_skipped():
    m = matrix_of(results("impl", ("api.value", "reentrant", "pass"), ("api.value", "reentrant", "skip"),
                          ("api.grads", "reentrant", "skip"), ("api.should", "reentrant", "fail"),
                          ("api.should", "reentrant", "skip")))
    column = Column("impl", "reentrant", "cpu")
    assert [m.cell(c, column).verdict for c in ("api.value", "api.grads", "api.should")] == ["pass", "skip", "fail"]


def test_passes_the_implementation_noted_are_marked_not_plain_passes():
    # A compiled row notes each graph break: such a test passed partly as eager Python, not compiled.
    run = results("impl", ("api.value", "reentrant", "pass"), ("api.grads", "reentrant", "pass"))
    run.records[0].facts = replace(run.records[0].facts, notes=("graph break, ran eagerly: Attempted to call function marked as skipped",))
    m = matrix_of(run)
    column = Column("impl", "reentrant", "cpu")
    assert [len(m.cell(c, column).noted) for c in ("api.value", "api.grads")] == [1, 0]
    assert m.noted_passes("impl") == (1, 2)
    site = render_site(m)
    assert 'data-noted="1/2"' in site["index.html"]
    for page in (site["index-details/impl-impl.html"], site["index-details/area-api.html"]):
        assert page.count('<sup class="noted">†</sup>') == 1
        assert "† graph break, ran eagerly: Attempted to call function marked as skipped" in page


INDEX_LIMIT = 2_000_000  # bytes (issue 19: the 32-run page was 35 MB; its index must stay under 2 MB)


def compat_sized_results(runs=32, swept_names=800):
    """Results the size of the full compatibility matrix (`tox -m compat`: 32 runs), at its worst for the
    index: every registered clause tested in every run, every test failing with a message, and every swept
    name deviating, under long implementation names. [(source, Results)]"""
    clauses = load_clauses()
    loaded = []
    for i in range(runs // 2):
        for variant in ("reentrant", "non_reentrant"):
            name = f"vendor{i}.distributed.activation_checkpointing.checkpoint_wrapper"
            records = [record(f"conformance/suite/test_{c.area}.py::test_{c.id}_{k}[{variant}]", c.id, variant,
                              ("fail", "crash")[k], f"AssertionError: {c.id} differs\n" + "x" * 400)
                       for c in clauses.values() if variant in c.variants for k in range(2)]
            records += [record(f"conformance/suite/test_sweep_ops.py::test_op[op{n}.variant-float64-sample0-{variant}]",
                               "api.same-gradients", variant, "fail", f"gradients of op{n} differ")
                        for n in range(swept_names)]
            loaded.append((f"{name}-{variant}-cpu.json", Results({"implementation": name, "device": "cpu"}, records)))
    return loaded


def test_the_index_of_32_runs_of_every_clause_and_sweep_failing_stays_under_2_mb():
    loaded = compat_sized_results()
    baseline = [(source, Results(r.header, [record(x.nodeid, x.clauses[0], x.variant, "pass") for x in r.records]))
                for source, r in loaded]
    site = render_site(build(loaded), compare(build(baseline), build(loaded)))
    index = len(site["index.html"].encode())
    assert index < INDEX_LIMIT, f"index: {index / 1e6:.2f} MB"
    # the index keeps its summaries: a card per implementation, areas × 32 runs, every deviating swept name
    assert site["index.html"].count('class="card"') == 16
    assert site["index.html"].count("data-worst=") == 32 * len(load_areas())
    assert site["index.html"].count("index-details/sweeps.html#swept-op-") == 800


def test_a_results_file_without_a_test_is_named_on_the_index():
    # It feeds no column, so no implementation page shows it (the runner found nothing to run, say).
    site = render_site(build([("a.json", results("impl", ("api.value", "reentrant", "pass"))),
                              ("sub/empty.json", results("broken.ckpt"))], clauses=CLAUSES, areas=AREAS))
    assert 'data-empty-runs="1"' in site["index.html"] and "<code>sub/empty.json</code> (broken.ckpt)" in site["index.html"]
    assert 'data-empty-runs' not in render_site(matrix_of(results("impl", ("api.value", "reentrant", "pass"))))["index.html"]


def test_page_names_are_file_names_unique_without_regard_to_case_and_links_are_relative():
    layout = Layout.of(matrix_of(results("Foo/bar", ("api.value", "reentrant", "pass")),
                                 results("foo bar", ("api.value", "reentrant", "pass"))), "compat.html")
    # one folder may be served from a case-insensitive file system (macOS, Windows)
    assert layout.implementations == {"Foo/bar": "compat-details/impl-Foo-bar.html",
                                      "foo bar": "compat-details/impl-foo-bar-2.html"}
    assert layout.areas == {"api": "compat-details/area-api.html"}  # rng: no clause of it tested
    page = layout.implementations["Foo/bar"]
    assert layout.href("compat.html", page, "d0-api.value") == "compat-details/impl-Foo-bar.html#d0-api.value"
    assert layout.href(page, "compat.html") == "../compat.html"
    assert layout.href(page, layout.areas["api"], "area-api") == "area-api.html#area-api"
    assert layout.href(page, page, "d0-api.value") == "#d0-api.value"


def test_repeated_unsupported_findings_are_collapsed_to_one_per_reason():
    """Issue 23: a row where everything is unsupported spelled out every sweep test (4.75 MB pages)."""
    from conformance.report.model import Cell

    unsupported = [record(f"t.py::test_{i}[reentrant]", "api.forward-value", "reentrant", "unsupported") for i in range(5)]
    failing = [record(f"t.py::test_f{i}[reentrant]", "api.forward-value", "reentrant", "fail") for i in range(2)]
    findings = Cell("fail", failing + unsupported).findings
    assert [(r.nodeid, alike) for r, alike in findings] == [
        ("t.py::test_f0[reentrant]", 0), ("t.py::test_f1[reentrant]", 0), ("t.py::test_0[reentrant]", 4)]
