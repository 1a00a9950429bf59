"""A newcomer's first hour (issue 45): the README's own-implementation flow on an implementation with one bug,
run where a user runs it, and what they read.

The implementation is torch's checkpoint whose non-reentrant variant forces ``preserve_rng_state=False``
(tests/mutants/rng/non_reentrant_forces_no_preserve.py). The flow runs once, from an installed harness in a
project folder of the user's own (the README's "anywhere" mode): ``pytest -p conformance.plugin --pyargs
conformance.suite --impl=...``, then ``python -m conformance run`` and ``report``. Then: the closing summary fits
one screen and names one cause, its reproducer script and its rerun command; the script prints the gradient
difference; nothing is charged to the reentrant variant, which the bug does not touch; the rerun command works
pasted, in the project folder and in the harness's checkout; nothing is written outside ``reports/``; and the
report's pages pass an automated accessibility check (axe-core, contrast included) in Chromium, with a screenshot
of "Failures by cause" kept for a person (reports/artifacts/, or $CONFORMANCE_ARTIFACTS).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.data.results import read_results
from conformance.data.vocabulary import OUTPUT_DIR, SEVERE

REPO = Path(__file__).resolve().parents[2]
IMPL = "tests.mutants.rng.non_reentrant_forces_no_preserve"
ARTIFACTS = Path(os.environ.get("CONFORMANCE_ARTIFACTS", REPO / OUTPUT_DIR / "artifacts"))
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
# The flow runs the whole suite twice (pytest, then `run`): minutes, more than the per-test limit (pyproject.toml) allows the
# module's first test, whose setup it is. (tox runs the self-tests with `--dist loadfile`: a module's tests share one
# pytest-xdist worker, so that the flow runs once, not once per worker.)
pytestmark = pytest.mark.timeout(1800)
ENV = {**os.environ, "PYTHONPATH": str(REPO), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def _run(command: list[str] | str, cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout,
                          shell=isinstance(command, str))


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    """The README's flow in a project folder of the user's: pytest's output, the run's results, the report."""
    project = tmp_path_factory.mktemp("project")
    pytest_run = _run([sys.executable, "-m", "pytest", "-p", "conformance.plugin", "--pyargs", "conformance.suite",
                       f"--impl={IMPL}"], project)
    runs = _run([sys.executable, "-m", "conformance", "run", "--impl", IMPL, "--out", f"{OUTPUT_DIR}/mine"], project)
    report = _run([sys.executable, "-m", "conformance", "report", f"{OUTPUT_DIR}/mine", "-o", f"{OUTPUT_DIR}/mine.html"],
                  project)
    assert report.returncode == 0, report.stderr
    return project, pytest_run, runs


def closing_summary(output: str) -> list[str]:
    """The lines from the "failures by cause" section to pytest's last line."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "failures by cause" in line)
    return lines[start:]


def test_the_closing_summary_fits_one_screen_and_names_the_one_cause(flow):
    _, pytest_run, _ = flow
    assert pytest_run.returncode == 1, pytest_run.stdout[-3000:]
    summary = closing_summary(pytest_run.stdout)
    text = "\n".join(summary)
    assert len(summary) <= 40, text
    assert summary[1].startswith("1 cause(s) of "), text
    assert re.search(r"^✗ rng differs from the plain run", text, re.M), text
    assert "    rerun: python -m pytest -p conformance.plugin --pyargs 'conformance.suite." in text
    assert "    reproducer: python " in text
    assert "⇡ inherited from torch's known upstream bugs" in text  # the failures torch itself has, apart


def test_the_reproducer_prints_the_gradient_difference(flow):
    project, pytest_run, _ = flow
    [line] = [line for line in closing_summary(pytest_run.stdout) if line.startswith("    reproducer: python ")]
    script = project / line.removeprefix("    reproducer: python ")
    assert script.is_file() and script.is_relative_to(project / OUTPUT_DIR)
    shown = _run([sys.executable, str(script)], project, timeout=300)
    assert shown.returncode == 1 and ": gradients: " in shown.stdout, shown.stdout + shown.stderr


def test_nothing_is_charged_to_the_variant_the_bug_does_not_touch(flow):
    project, _, runs = flow
    assert runs.returncode == 1, runs.stdout[-3000:]
    records = [r for f in (project / OUTPUT_DIR / "mine").glob("*.json") for r in read_results(f).records]
    assert {r.variant for r in records} == {"reentrant", "non_reentrant"}
    failing = [r for r in records if r.verdict in SEVERE and not r.upstream]
    assert failing and {r.variant for r in failing} == {"non_reentrant"}, [(r.nodeid, r.variant) for r in failing
                                                                           if r.variant != "non_reentrant"]


@pytest.mark.parametrize("where", ["project", "checkout"])
def test_the_rerun_command_works_pasted(flow, where):
    project, pytest_run, _ = flow
    [line] = [line for line in closing_summary(pytest_run.stdout) if line.startswith("    rerun: ")]
    rerun = _run(line.removeprefix("    rerun: "), project if where == "project" else REPO, timeout=300)
    assert rerun.returncode == 1 and "1 failed" in rerun.stdout, rerun.stdout[-3000:] + rerun.stderr


def test_nothing_is_written_outside_the_output_folder(flow):
    project, _, _ = flow
    assert sorted(p.name for p in project.iterdir()) == [OUTPUT_DIR]


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright (never a browser of Playwright's own download)."""
    if CHROMIUM is None:
        pytest.skip("needs headless Chromium (Debian: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (tox -e selftest installs it)")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        yield chromium
        chromium.close()


@pytest.mark.parametrize("width", [1400, 1024])
def test_the_failing_implementations_pages_pass_an_accessibility_check(flow, browser, width):
    """axe-core's rules in Chromium, contrast included, on the index and the implementation's page; neither is wider
    than the window; "Failures by cause" screenshotted for a person to look at."""
    axe = pytest.importorskip("axe_playwright_python.sync_playwright", reason="needs axe-playwright-python").Axe()
    project, _, _ = flow
    index = project / OUTPUT_DIR / "mine.html"
    pages = [index, *sorted((project / OUTPUT_DIR / "mine-details").glob("impl-*.html"))]
    page = browser.new_page(viewport={"width": width, "height": 900})
    for path in pages:
        page.goto(path.as_uri())
        # The detail pages lay out far-away findings lazily (content-visibility): axe reads colours from the
        # layout, so lay everything out first.
        page.add_style_tag(content="* { content-visibility: visible !important; }")
        violations = axe.run(page).response["violations"]
        assert not violations, f"{path.name} at {width} px: " + "; ".join(
            f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']} {v['nodes'][0]['failureSummary']}" for v in violations)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{path.name} is wider than {width} px"
    page.goto(pages[1].as_uri() + "#causes")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.locator("#causes").screenshot(path=str(ARTIFACTS / f"failures-by-cause-{width}.png"))
    page.close()


def test_seven_runs_fit_the_index_of_a_1400_px_window(browser, tmp_path):
    """The areas × runs table of seven runs (three implementations' two variants and one more) needs no scrolling."""
    from conformance.__main__ import main
    from conformance.data.results import write_results
    from tests.integration.test_report_browser import run

    runs = [(impl, variant) for impl in ("torch.utils.checkpoint", "reference_impl", "torch_checkpoint_wrapper")
            for variant in ("reentrant", "non_reentrant")] + [("deepspeed_cpu_checkpointing", "reentrant")]
    for n, (impl, variant) in enumerate(runs):
        write_results(tmp_path / f"{n}.json", run(impl, variant, ("api.forward-value", "pass", ""),
                                                   ("rng.same-gradients", "fail", "differs")))
    assert main(["report", str(tmp_path), "-o", str(tmp_path / "index.html")]) == 0
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto((tmp_path / "index.html").as_uri())
    table, room = page.evaluate("[document.querySelector('table.areas').scrollWidth, "
                                "document.querySelector('#areas .scroll').clientWidth]")
    page.close()
    assert table <= room, f"the areas table is {table} px wide in {room} px"
