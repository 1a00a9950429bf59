"""Benchmark: how big the report's index and detail pages are and how long headless Chromium takes to show
them, with many runs.

    python benchmarks/report_page.py RESULTS_DIR [--runs 32] [--failing 0.3] [--repeat 3]

Takes the results files of RESULTS_DIR (e.g. `tox -e report`'s reports/builtin, or the pathological
matrix: `python benchmarks/runner_matrix.py --only pathological --keep DIR`, then DIR/pathological) and
copies them under new implementation names until there are at least --runs runs; with --failing, every
copy but the first fails that share of its passing tests, with a traceback-sized message (the third-party
rows of `tox -m compat` fail far more than the built-in ones). Renders the report, and loads the index and
the largest detail page in headless Chromium, each inside a frame whose parent notes the time from
navigation to the first frame painted after the page's load event (layout included). Printed: runs,
the size of the index, of the largest detail page and of all pages, findings, the times.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from conformance.report import write_report  # noqa: E402
from conformance.report.layout import details_of  # noqa: E402
from conformance.data.results import read_results, write_results  # noqa: E402

TIMER = """<html><head><title>-</title></head><body><script>const t0 = performance.now();</script>
<iframe src="{page}" style="width:1400px;height:1100px" onload="const h = this.contentDocument.body.offsetHeight;
requestAnimationFrame(() => {{ document.title = 'ms=' + (performance.now() - t0).toFixed(0); }});"></iframe></body></html>"""
# What a failing third-party test records: an assertion with the tensors that differ, about 1.5 kB.
FAILURE = "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 7 / 64 (10.9%)\n" + "\n".join(
    f"  frame {n}: torch/testing/_comparison.py, in assert_close: {'x' * 60}" for n in range(18))


def many_runs(source: Path, runs: int, out: Path, failing: float) -> int:
    files = sorted(source.glob("*.json"))
    copies = -(-runs // len(files))
    for k in range(copies):
        for path in files:
            results = read_results(path)
            results.header["implementation"] = f"{results.header['implementation']}.copy{k}"
            passing = [r for r in results.records if r.status == "pass"]
            for record in passing[: int(len(passing) * failing) if k else 0]:
                record.status, record.message = "fail", FAILURE
            write_results(out / f"{k}-{path.name}", results)
    return copies * len(files)


def load_ms(page: Path, chromium: str, profile: Path) -> int:
    timer = page.parent / "timer.html"
    timer.write_text(TIMER.format(page=page.name))
    done = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--allow-file-access-from-files",
         f"--user-data-dir={profile}", "--virtual-time-budget=60000", "--dump-dom", timer.as_uri()],
        capture_output=True, text=True, timeout=300)
    found = re.search(r"<title>ms=(\d+)</title>", done.stdout)
    if not found:
        raise RuntimeError(f"no timing from Chromium: {done.stderr[-1000:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--runs", type=int, default=32)
    parser.add_argument("--failing", type=float, default=0.0, metavar="SHARE",
                        help="share of the passing tests that fail in every copy but the first (default: 0)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    chromium = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    with tempfile.TemporaryDirectory(prefix="bench-page-") as work:
        work = Path(work)
        (work / "results").mkdir()
        runs = many_runs(args.results, args.runs, work / "results", args.failing)
        index = write_report(sorted((work / "results").glob("*.json")), work / "site" / "compatibility.html")
        details = sorted((index.parent / details_of(index.name)).glob("*.html"), key=lambda p: p.stat().st_size)
        findings = sum(p.read_text(encoding="utf-8").count('class="record"') for p in details)
        print(f"{runs} runs, {findings} findings: index {index.stat().st_size / 1e6:.2f} MB, largest detail page "
              f"{details[-1].stat().st_size / 1e6:.2f} MB ({details[-1].name}), {len(details)} detail pages, "
              f"{sum(p.stat().st_size for p in [index, *details]) / 1e6:.2f} MB in all")
        if chromium is None:
            print("no Chromium here: load times not measured")
            return 0
        for page in (index, details[-1]):
            times = [load_ms(page, chromium, work / "profile") for _ in range(args.repeat)]
            print(f"Chromium, {page.name}, navigation to first frame after load: median {statistics.median(times)} ms ({times})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
