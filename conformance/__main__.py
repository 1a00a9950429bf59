"""``python -m conformance run ...`` (run the suite, record results), ``python -m conformance report
...`` (render results as static HTML: an index page and its detail pages), ``python -m conformance clauses
[ID ...]`` (list the clause and area ids), ``python -m conformance schema`` (the results file's JSON Schema) and ``python -m conformance findings [--check]`` (the findings a
maintainer can file, findings/findings.toml). ``python -m conformance <command> --help`` for details."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from conformance.data import registry
from conformance.plugin.options import declare
from conformance.data.vocabulary import OUTPUT_DIR


def main(argv=None) -> int:
    from conformance.run import Limits

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
    declare(run.add_argument, matrix=True)
    run.add_argument("--out", type=Path, default=Path(OUTPUT_DIR),
                     help=f"directory for results, logs and reproducer scripts (default: {OUTPUT_DIR})")
    defaults = Limits()
    run.add_argument("--timeout", type=float, default=defaults.test_timeout, metavar="S",
                     help="per-test limit; a test still running is stopped and recorded as TIMEOUT. torch, pytest and "
                     f"the implementation are imported before the clock starts (default: {defaults.test_timeout:g})")
    run.add_argument("--cut-timeout", type=float, default=defaults.cut_timeout, metavar="S",
                     help="per-test limit once a run has had --cut-after timeouts; slow tests keep --slow-timeout "
                     f"(default: {defaults.cut_timeout:g})")
    run.add_argument("--slow-timeout", type=float, default=defaults.slow_timeout, metavar="S",
                     help="per-test limit of slow tests (property-based, multi-process: seconds each, more on a busy "
                     f"machine), never below --timeout; once the run is cut, {defaults.slow_cut_timeout:g} s "
                     f"(default: {defaults.slow_timeout:g})")
    run.add_argument("--cut-after", type=int, default=defaults.cut_after, metavar="N",
                     help=f"timeouts after which a run's later tests get --cut-timeout (default: {defaults.cut_after})")
    run.add_argument("--lanes", type=int, default=defaults.lanes, metavar="N",
                     help="after --cut-after timeouts, the run's tests left run in N processes side by side (hung "
                     f"tests only wait) (default: {defaults.lanes})")
    run.add_argument("--abandon-after", type=int, default=defaults.abandon_after, metavar="K",
                     help="after K crashes or timeouts in a row in one test file, with no pass between, its tests "
                     "left are recorded as NOT RUN, saying why, and the run goes on with the next file; once K files are "
                     "abandoned a later file goes at its first death, once 2K are the whole run (0: never) "
                     f"(default: {defaults.abandon_after})")
    run.add_argument("--run-timeout", type=float, default=defaults.run_timeout, metavar="S",
                     help="limit for each run as a whole; the running test is then recorded as TIMEOUT, the tests "
                     f"left as NOT RUN (default: {defaults.run_timeout:g})")
    run.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                     help="runs at a time (default: the machine's cores)")
    run.add_argument("--shard", type=_shard, default=(1, 1), metavar="I/N",
                     help="run only the I-th of N deterministic slices of the matrix (runs), e.g. on N CI machines; "
                     "`report` merges their results files (default: 1/1, everything)")

    report = commands.add_parser(
        "report", help="render results files as static HTML pages: an index and its detail pages",
        description="Render results files (from `run` or pytest --results) as static HTML pages without script: an "
        "index (conformance percentages, areas × runs, the sweeps, changes since --baseline) and, in the folder "
        "beside it, a page per implementation (its clause × run matrix, failures, environments) and per area (its "
        "clauses × every run). All links are relative: publish the index with its folder as they are.",
    )
    report.add_argument("results", nargs="+", type=Path,
                        help="results files (JSON), or directories whose *.json files (at any depth, e.g. one "
                        "folder per shard) are taken")
    report.add_argument("-o", "--output", type=Path, default=Path(OUTPUT_DIR, "index.html"),
                        help="the index page to write; the detail pages go into NAME-details/ beside it "
                        f"(default: {OUTPUT_DIR}/index.html, with {OUTPUT_DIR}/index-details/)")
    report.add_argument("--baseline", action="append", type=Path, default=[], metavar="OLD.json",
                        help="earlier results to compare with (repeatable): the page lists cells whose verdict changed")
    report.add_argument("--expectations", type=Path, default=None, metavar="TOML",
                        help="judge the results again against this expectations file (e.g. after editing "
                        "conformance/data/expectations.toml), without re-running: statuses stay, expectations are recomputed")
    report.add_argument("--title", default="Activation checkpointing conformance")
    report.add_argument("--findings", type=Path, default=None, metavar="TOML",
                        help="add the page of the findings a maintainer can file, from this registry "
                        "(findings/findings.toml), with a copy of each finding's script")

    clauses = commands.add_parser(
        "clauses", help="list the clause and area ids (--clause takes either) with levels, variants and titles",
        description="List the clause registry by area: each clause's id, level, the variants it binds and its title. "
        "Name areas or clauses to list only those, with their texts and sources (and a named clause's note).",
    )
    clauses.add_argument("ids", nargs="*", metavar="ID", help="an area id (e.g. rng) or a clause id (e.g. "
                         "rng.stream-restored) to list (repeatable; default: every clause)")
    clauses.add_argument("--text", action="store_true", help="show every listed clause's text and source")

    findings = commands.add_parser(
        "findings", help="list the findings a maintainer can file (findings/findings.toml); --check runs their scripts",
        description="List the registered findings: bugs of a package (or of torch) behind declared deviations, each "
        "with a standalone script. With --check, run each script whose package is importable here: it must fail (exit "
        "1) on the package and pass (exit 0) on torch's checkpoint, or on the reference for torch's own findings; one "
        "that passes on the package is flagged (fixed upstream?) and fails the check, like a fixed deviation.",
    )
    findings.add_argument("--check", action="store_true", help="run the scripts (a package that is absent: not checked)")
    findings.add_argument("--project", action="append", default=[], metavar="P",
                          help="only this project's findings (repeatable), e.g. torch, unsloth")
    findings.add_argument("--registry", type=Path, default=None, metavar="TOML",
                          help="the registry (default: findings/findings.toml in the current folder, a checkout's root)")

    commands.add_parser(
        "schema", help="print the results file's JSON Schema (conformance/data/results.schema.json is its published copy)",
        description="Print the JSON Schema of the results files `run` writes, from the model the harness reads them by.")

    argv = sys.argv[1:] if argv is None else list(argv)
    pytest_args: list[str] = []
    if "--" in argv:
        argv, pytest_args = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    args = parser.parse_args(argv)
    asked = args.clause if args.command == "run" else getattr(args, "ids", [])
    if asked and (unknown := registry.unknown_ids(asked)):
        option = "--clause: " if args.command == "run" else ""
        print(f"python -m conformance {args.command}: {option}unknown clause or area id(s): {'; '.join(unknown)}",
              file=sys.stderr)
        return 2
    if args.command == "run":
        from conformance.run import expand, run_all, shard

        specs = shard(expand(args.impl, args.variant or ["both"], args.device or ["cpu"]), *args.shard)
        limits = Limits(test_timeout=args.timeout, run_timeout=args.run_timeout, cut_timeout=args.cut_timeout,
                        cut_after=args.cut_after, slow_timeout=args.slow_timeout, lanes=max(1, args.lanes),
                        abandon_after=max(0, args.abandon_after))
        return run_all(specs, args.out, limits, clauses=args.clause, pytest_args=pytest_args, jobs=args.jobs,
                       strict_levels=args.strict_levels)
    if pytest_args:
        parser.error("arguments after -- are for `run` only")
    if args.command == "findings":
        from conformance.data import findings

        return findings.main(args.registry or findings.FINDINGS_PATH, projects=args.project, run_checks=args.check)
    if args.command == "schema":
        import json

        from conformance.data.results import json_schema

        print(json.dumps(json_schema(), indent=1))
        return 0
    if args.command == "clauses":
        from conformance.data.listing import listing

        print(listing(args.ids, text=args.text))
        return 0
    from conformance.report import write_report

    try:
        results = [f for p in args.results for f in (sorted(p.rglob("*.json")) if p.is_dir() else [p])]
        if not results:
            raise ValueError(f"no results file (*.json) in {', '.join(map(str, args.results))}: nothing to report "
                             f"(`python -m conformance run --out FOLDER` writes them)")
        path = write_report(results, args.output, baseline=args.baseline, title=args.title,
                            expectations=args.expectations, findings=args.findings)
    except (OSError, ValueError) as exc:
        print(f"python -m conformance report: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


def _shard(text: str) -> tuple[int, int]:
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected I/N, e.g. 2/4") from None
    if not 1 <= index <= count:
        raise argparse.ArgumentTypeError(f"{text!r}: I must be between 1 and N")
    return index, count


if __name__ == "__main__":
    sys.exit(main())
