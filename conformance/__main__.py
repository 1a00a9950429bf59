"""``python -m conformance run ...`` (run the suite, record results) and ``python -m conformance report
...`` (render results as one static HTML page). ``python -m conformance <command> --help`` for details."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.vocabulary import DEVICES, VARIANTS


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance",
        description="Activation-checkpointing conformance: run the suite against implementations, and report.")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser(
        "run", help="run the suite against implementations, one supervised pytest per (impl, variant, device)",
        description="Run the conformance suite against each --impl × --variant × --device in its own pytest "
        "process, isolating crashes and hangs, and write <out>/<impl>-<variant>-<device>.json (+ .log). "
        "Arguments after `--` go to pytest.",
    )
    run.add_argument("--impl", action="append", required=True, metavar="MODULE",
                     help="implementation under test, as for pytest --impl (repeatable)")
    run.add_argument("--variant", action="append", choices=(*VARIANTS, "both"),
                     help="variant(s) to run, each in its own run (repeatable; default: both)")
    run.add_argument("--device", action="append", choices=(*DEVICES, "all"),
                     help="device(s) to run, each in its own run (repeatable; default: cpu)")
    run.add_argument("--clause", action="append", default=[], metavar="ID",
                     help="only the tests of this clause or area id (repeatable)")
    run.add_argument("--out", type=Path, default=Path("reports"), help="directory for results (default: reports)")
    run.add_argument("--timeout", type=float, default=120.0, metavar="S",
                     help="per-test limit; a test still running is stopped and recorded as TIMEOUT. The first test "
                     "of each process also pays for the implementation's lazy imports (default: 120)")
    run.add_argument("--run-timeout", type=float, default=1800.0, metavar="S",
                     help="limit for each run as a whole; tests left then are recorded as TIMEOUT (default: 1800)")
    run.add_argument("--jobs", "-j", type=int, default=1, help="runs at a time (default: 1)")

    report = commands.add_parser(
        "report", help="render results files as one self-contained HTML page",
        description="Render results files (from `run` or pytest --results) as a static HTML page: the clause × "
        "run matrix, conformance percentages, failures, environments, and changes since --baseline.",
    )
    report.add_argument("results", nargs="+", type=Path,
                        help="results files (JSON), or directories whose *.json files are taken")
    report.add_argument("-o", "--output", type=Path, default=Path("reports/index.html"),
                        help="the HTML file to write (default: reports/index.html)")
    report.add_argument("--baseline", action="append", type=Path, default=[], metavar="OLD.json",
                        help="earlier results to compare with (repeatable): the page lists cells whose verdict changed")
    report.add_argument("--expectations", type=Path, default=None, metavar="TOML",
                        help="judge the results again against this expectations file (e.g. after editing "
                        "conformance/expectations.toml), without re-running: statuses stay, expectations are recomputed")
    report.add_argument("--title", default="Activation checkpointing conformance")

    argv = sys.argv[1:] if argv is None else list(argv)
    pytest_args: list[str] = []
    if "--" in argv:
        argv, pytest_args = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    args = parser.parse_args(argv)
    if args.command == "run":
        from conformance.run import Limits, expand, run_all

        specs = expand(args.impl, args.variant or ["both"], args.device or ["cpu"])
        limits = Limits(test_timeout=args.timeout, run_timeout=args.run_timeout)
        return run_all(specs, args.out, limits, clauses=args.clause, pytest_args=pytest_args, jobs=args.jobs)
    if pytest_args:
        parser.error("arguments after -- are for `run` only")
    from conformance.report import write_report

    try:
        results = [f for p in args.results for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
        path = write_report(results, args.output, baseline=args.baseline, title=args.title,
                            expectations=args.expectations)
    except (OSError, ValueError) as exc:
        print(f"python -m conformance report: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
