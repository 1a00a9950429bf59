"""The report as a person sees it: its index and detail pages rendered by headless Chromium, read back
from the DOM, their links followed, and screenshotted (kept under reports/artifacts/, or
$CONFORMANCE_ARTIFACTS, for a person to look at)."""

import html.parser
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from conformance.__main__ import main
from conformance.data.registry import load_clauses
from conformance.report.layout import details_of
from conformance.report.model import build
from conformance.data.results import Results, read_results, write_results
from tests.unit.test_report import record

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("CONFORMANCE_ARTIFACTS", REPO / "reports" / "artifacts"))
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
MARKUP = "<script>alert(1)</script><b>bold</b>"

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs headless Chromium (Debian: apt-get install chromium)")


def chromium(page: Path, tmp_path: Path, *args: str) -> str:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={tmp_path / 'chromium-profile'}", *args, page.resolve().as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def details(index: Path, pattern: str = "*.html") -> list[Path]:
    """The detail pages of the report whose index is ``index``."""
    return sorted((index.parent / details_of(index.name)).glob(pattern))


def dom_of(pages: list[Path], tmp_path: Path) -> "Dom":
    """The DOMs Chromium built of ``pages``, as one."""
    return Dom("".join(chromium(page, tmp_path, "--dump-dom") for page in pages))


def run(impl, variant, *records):
    return Results(
        header={"implementation": impl, "implementation_version": "1.0", "variant": variant, "device": "cpu",
                "torch": "2.13.0", "python": "3.11", "platform": "Linux"},
        records=[record(f"conformance/suite/test_x.py::test_{c.replace('.', '_')}[{variant}]", c, variant, o, m)
                 for c, o, m in records],
    )


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A report of a conforming implementation, a broken one (with a swept op) and one whose name is no file
    name, with a baseline. Its index."""
    d = tmp_path_factory.mktemp("report")
    bad_reentrant = run("bad.ckpt", "reentrant", ("api.forward-value", "pass", ""),
                        ("api.same-gradients", "fail", f"AssertionError: {MARKUP}"),
                        ("reqgrad.reentrant-warns", "crash", "the test process died (killed by signal SIGKILL)"))
    bad_reentrant.records.append(record("conformance/suite/test_sweep_ops.py::test_op[nn.functional.rrelu-float64-sample0-reentrant]",
                                        "api.same-gradients", "reentrant", "fail", "gradients differ"))
    files = {
        "good-reentrant.json": run("good.ckpt", "reentrant", ("api.forward-value", "pass", ""),
                                   ("api.same-gradients", "pass", ""), ("reqgrad.reentrant-warns", "pass", "")),
        "good-non_reentrant.json": run("good.ckpt", "non_reentrant", ("api.forward-value", "pass", ""),
                                       ("api.same-gradients", "pass", ""), ("reqgrad.non-reentrant-gradients", "pass", "")),
        "bad-reentrant.json": bad_reentrant,
        "bad-non_reentrant.json": run("bad.ckpt", "non_reentrant", ("api.forward-value", "pass", ""),
                                      ("api.same-gradients", "expected_deviation", "expected deviation: known"),
                                      ("reqgrad.non-reentrant-gradients", "timeout", "did not finish within 5 s")),
        "odd-reentrant.json": run("odd <name> & co", "reentrant", ("api.forward-value", "pass", "")),
    }
    for name, results in files.items():
        write_results(d / name, results)
    write_results(d / "old-bad-reentrant.json", run("bad.ckpt", "reentrant", ("api.forward-value", "pass", ""),
                                                    ("api.same-gradients", "pass", ""), ("reqgrad.reentrant-warns", "pass", "")))
    out = d / "index.html"
    assert main(["report", *[str(d / n) for n in files], "-o", str(out), "--baseline", str(d / "old-bad-reentrant.json")]) == 0
    return out


class Dom(html.parser.HTMLParser):
    """The DOM Chromium built: cells by (row clause, column), card scores, elements, text."""

    def __init__(self, text):
        super().__init__()
        self.tags, self.cells, self.scores, self.chunks, self.clause = [], {}, {}, [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = dict(attrs)
        if tag == "tr" and "data-clause" in a:
            self.clause = a["data-clause"]
        if tag == "td" and "data-verdict" in a:
            self.cells[(self.clause, int(a["data-column"]))] = a["data-verdict"]
        if tag == "div" and "data-implementation" in a:
            self.impl = a["data-implementation"]
        if tag == "div" and "data-score" in a:
            self.scores[self.impl] = a["data-score"]

    def handle_data(self, data):
        self.chunks.append(data)

    @property
    def text(self):
        return " ".join(" ".join(self.chunks).split())


def test_chromium_shows_the_cells_the_counts_and_messages_as_text(page, tmp_path):
    index = dom_of([page], tmp_path)
    assert index.scores == {"good.ckpt": "4/4", "bad.ckpt": "1/4", "odd <name> & co": "1/1"}
    assert "100% 4 of 4 applicable MUST clauses conform" in index.text and "25% 1 of 4" in index.text
    assert "2 cell(s) changed" in index.text  # vs the baseline: same-gradients and reentrant-warns got worse
    areas = dom_of(details(page, "area-*.html"), tmp_path)  # every clause × every run
    # columns: good·reentrant, good·non_reentrant, bad·reentrant, bad·non_reentrant, odd·reentrant
    assert areas.cells[("api.same-gradients", 2)] == "fail" and areas.cells[("api.same-gradients", 3)] == "expected_deviation"
    assert areas.cells[("reqgrad.reentrant-warns", 2)] == "crash" and areas.cells[("reqgrad.reentrant-warns", 3)] == "n/a"
    assert areas.cells[("reqgrad.non-reentrant-gradients", 3)] == "timeout"
    assert {areas.cells[(c, i)] for c in ("api.forward-value", "api.same-gradients") for i in (0, 1)} == {"pass"}
    assert "✗ fail" in areas.text and "☠ crash" in areas.text and "◷ timeout" in areas.text
    bad = dom_of(details(page, "impl-bad.ckpt.html"), tmp_path)
    assert f"AssertionError: {MARKUP}" in bad.text  # the implementation's markup is text ...
    for dom in (index, areas, bad):
        assert "script" not in dom.tags and "b" not in dom.tags  # ... never elements


class Links(html.parser.HTMLParser):
    """A page's links and the ids of its elements."""

    def __init__(self, text):
        super().__init__()
        self.hrefs, self.ids = [], set()
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a":
            self.hrefs.append(a["href"])


def test_the_index_opens_and_every_link_of_it_and_of_its_detail_pages_resolves(page, tmp_path):
    """From the index, follow every link: each names a file of the report (relative, nothing fetched) and an
    element of it that Chromium built; every detail page is reached. The one kind of link out, a clause's
    source, goes to that clause's public page, and is not followed."""
    sources = {clause.source_url for clause in load_clauses().values()} - {""}
    pages, queue, links = {}, [page.resolve()], []
    while queue:
        here = queue.pop()
        if here not in pages:
            dom = chromium(here, tmp_path, "--dump-dom")
            assert '<header class="page">' in dom and "</h1>" in dom, f"{here} did not open: {dom[:300]}"
            pages[here] = Links(dom)
            for href in pages[here].hrefs:
                url = urlsplit(href)
                if href in sources:
                    continue
                assert not url.scheme and not url.netloc and not url.path.startswith("/"), f"{here}: {href}"
                target = (here.parent / unquote(url.path)).resolve() if url.path else here
                assert target.is_file(), f"{here}: {href} names no file"
                links.append((here, href, target, unquote(url.fragment)))
                queue.append(target)
    assert set(pages) == {page.resolve(), *(p.resolve() for p in details(page))}  # every detail page is linked
    assert {p.name for p in details(page)} == {"impl-good.ckpt.html", "impl-bad.ckpt.html", "impl-odd-name-co.html",
                                               "area-api.html", "area-reqgrad.html", "sweeps.html", "changes.html"}
    broken = [(here.name, href) for here, href, target, anchor in links if anchor and anchor not in pages[target].ids]
    assert not broken
    anchored = {target.name for _, _, target, anchor in links if anchor}
    assert {"impl-bad.ckpt.html", "area-api.html", "sweeps.html"} <= anchored  # cells, areas and swept names


def test_screenshot_for_a_person(page, tmp_path):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name, shown in (("report-top.png", page), ("report-implementation-top.png", details(page, "impl-bad.ckpt.html")[0])):
        chromium(shown, tmp_path, f"--screenshot={ARTIFACTS / name}", "--window-size=1400,1100")
        assert (ARTIFACTS / name).stat().st_size > 20_000
        print(f"screenshot of the report: {ARTIFACTS / name}")


@pytest.fixture(scope="module")
def many_runs_page(tmp_path_factory):
    """24 runs (6 implementations × 2 variants × 2 devices), each with a failure, a crash and a timeout."""
    d = tmp_path_factory.mktemp("many")
    outcomes = [("api.forward-value", "pass", ""), ("api.same-gradients", "fail", f"AssertionError: {MARKUP}"),
                ("reqgrad.reentrant-warns", "crash", "died"), ("reqgrad.non-reentrant-gradients", "timeout", "hung")]
    for i in range(6):
        for variant in ("reentrant", "non_reentrant"):
            for device in ("cpu", "cuda"):
                results = run(f"impl{i}", variant, *outcomes)
                results.header["device"] = device
                for each in results.records:
                    each.facts = replace(each.facts, device=device)
                write_results(d / f"impl{i}-{variant}-{device}.json", results)
    out = d / "index.html"
    assert main(["report", str(d), "-o", str(out)]) == 0
    return out


def test_chromium_shows_24_runs_with_the_area_summary_on_the_index_and_a_repro_command_per_finding(many_runs_page, tmp_path):
    assert len({column for _, column in dom_of(details(many_runs_page, "area-*.html"), tmp_path).cells}) == 24
    index = chromium(many_runs_page, tmp_path, "--dump-dom")
    summary = index[index.index('id="areas"'):]
    assert summary.count("data-worst=") == 2 * 24  # areas api and reqgrad × runs
    assert summary.count('data-worst="fail"') == 24  # api: 1 of 2 clauses pass, the other fails
    # one command per non-pass test, on the implementations' pages: a fail, a crash and a timeout in every run
    implementations = dom_of(details(many_runs_page, "impl-*.html"), tmp_path)
    assert len(details(many_runs_page, "impl-*.html")) == 6
    # ... and one per cause, at the top of each implementation's page (Failures by cause)
    matrix = build([(f.name, read_results(f)) for f in sorted(many_runs_page.parent.glob("*.json"))])
    causes = sum(len(matrix.failures_by_cause(i)) for i in matrix.implementations)
    assert implementations.text.count("Reproduce: python -m pytest -p conformance.plugin --pyargs 'conformance.suite.test_x::") == 24 * 3 + causes
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    chromium(many_runs_page, tmp_path, f"--screenshot={ARTIFACTS / 'report-24-runs-top.png'}", "--window-size=1400,1100")
