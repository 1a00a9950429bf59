"""Benchmark: how big the report page is and how long headless Chromium takes to show it, with many runs.

    python benchmarks/report_page.py RESULTS_DIR [--runs 24] [--repeat 3]

Takes the results files of RESULTS_DIR (e.g. the pathological matrix: `python
benchmarks/runner_matrix.py --only pathological --keep DIR`, then DIR/pathological) and copies them
under new implementation names until there are at least --runs runs, renders the page, and loads it
in headless Chromium inside a frame whose parent notes the time from navigation to the first frame
painted after the page's load event (layout included). Printed: runs, bytes, findings, the times.
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
from conformance.results import read_results, write_results  # noqa: E402

TIMER = """<html><head><title>-</title></head><body><script>const t0 = performance.now();</script>
<iframe src="page.html" style="width:1400px;height:1100px" onload="const h = this.contentDocument.body.offsetHeight;
requestAnimationFrame(() => { document.title = 'ms=' + (performance.now() - t0).toFixed(0); });"></iframe></body></html>"""


def many_runs(source: Path, runs: int, out: Path) -> int:
    files = sorted(source.glob("*.json"))
    copies = -(-runs // len(files))
    for k in range(copies):
        for path in files:
            results = read_results(path)
            results.header["implementation"] = f"{results.header['implementation']}.copy{k}"
            write_results(out / f"{k}-{path.name}", results)
    return copies * len(files)


def load_ms(page_dir: Path, chromium: str) -> int:
    (page_dir / "timer.html").write_text(TIMER)
    done = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--allow-file-access-from-files",
         f"--user-data-dir={page_dir / 'profile'}", "--virtual-time-budget=60000", "--dump-dom",
         (page_dir / "timer.html").as_uri()], capture_output=True, text=True, timeout=300)
    found = re.search(r"<title>ms=(\d+)</title>", done.stdout)
    if not found:
        raise RuntimeError(f"no timing from Chromium: {done.stderr[-1000:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--runs", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    chromium = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    with tempfile.TemporaryDirectory(prefix="bench-page-") as work:
        work = Path(work)
        (work / "results").mkdir()
        runs = many_runs(args.results, args.runs, work / "results")
        page = write_report(sorted((work / "results").glob("*.json")), work / "page.html")
        html = page.read_text(encoding="utf-8")
        findings, cells = html.count('class="record"'), html.count('class="cell ')
        print(f"{runs} runs: {len(html.encode()) / 1e6:.2f} MB, {findings} findings, {cells} matrix cells")
        if chromium is None:
            print("no Chromium here: load time not measured")
            return 0
        times = [load_ms(work, chromium) for _ in range(args.repeat)]
        print(f"Chromium, navigation to first frame after load: median {statistics.median(times)} ms ({times})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
