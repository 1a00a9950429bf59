"""`python -m conformance run`: supervised pytest runs that survive crashes and hangs.

Two layers: the supervisor's bookkeeping against a scripted stand-in for pytest (fast, exact), and
real runs of the suite against the broken implementations in tests/broken (crash, hang, markup).
"""

import html.parser
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conformance.__main__ import main
from conformance.report import _load, build
from conformance.report.layout import details_of
from conformance.data.facts import Facts
from conformance.data.results import Record, read_results
from conformance.run import Limits, RunSpec, expand, processes, run_all, shard, supervisor
from conformance.run.ledger import Ledger
from conformance.run import progress as progress_module
from conformance.run.progress import Progress

REPO = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------------ bookkeeping (no processes)


def test_expand_runs_each_variant_and_device_on_its_own():
    specs = expand(["a", "b", "a"], ["both"], ["cpu"])
    assert [(s.impl, s.variant, s.device) for s in specs] == [
        ("a", "reentrant", "cpu"), ("a", "non_reentrant", "cpu"), ("b", "reentrant", "cpu"), ("b", "non_reentrant", "cpu")]
    assert [(s.variant, s.device) for s in expand(["a"], ["reentrant"], ["all"])] == [("reentrant", "cpu"), ("reentrant", "cuda")]
    assert RunSpec("torch.utils.checkpoint", "reentrant", "cpu").name == "torch.utils.checkpoint-reentrant-cpu"


def test_pytest_args_use_thread_timeouts_and_the_run_options(tmp_path):
    args = processes.pytest_args_for(RunSpec("m", "reentrant", "cuda"), tmp_path / "r.json", tmp_path / "p.json", 7,
                                     clauses=["api"], pytest_args=["-x"], deselect=["t.py::a[x]"])
    for arg in ("--impl=m", "--variant=reentrant", "--device=cuda", "--timeout=7", "--timeout-method=thread", "--tb=native",
                "-p", "no:cacheprovider", "--clause=api", "-x", "--deselect=t.py::a[x]", f"--results={tmp_path / 'r.json'}"):
        assert arg in args
    assert args[-1] == str(processes.SUITE_DIR)
    assert "no:conformance-staleness" in args, "an attempt runs part of the row: the supervisor judges staleness"


def test_the_per_test_limit_is_cut_after_some_timeouts():
    limits = Limits(test_timeout=10, cut_after=2, cut_timeout=2)
    assert [limits.for_run(n) for n in range(4)] == [10, 10, 2, 2]
    assert Limits(test_timeout=1, cut_timeout=2).for_run(5) == 1  # never longer than the limit asked for


def test_a_slow_test_never_gets_less_than_an_ordinary_one():
    assert Limits(test_timeout=10, slow_timeout=60).slow_limit == 60
    assert Limits(test_timeout=600, slow_timeout=60).slow_limit == 600  # the inductor env's raised --timeout


def test_a_slow_test_is_cut_less_and_only_once_the_run_is():
    limits = Limits(test_timeout=10, cut_timeout=5, slow_timeout=60, slow_cut_timeout=20)
    assert [limits.slow_limit_under(limits.for_run(n)) for n in (0, 2)] == [60, 20]
    assert Limits(test_timeout=10, cut_timeout=5, slow_timeout=15, slow_cut_timeout=20).slow_limit_under(5) == 15


def test_shards_split_the_matrix_deterministically_and_cover_it_once():
    specs = expand(["a", "b", "c"], ["both"], ["cpu"])
    shards = [shard(specs, i, 4) for i in range(1, 5)]
    assert sorted((s for part in shards for s in part), key=specs.index) == specs
    assert shards == [shard(specs, i, 4) for i in range(1, 5)]
    assert shard(specs, 1, 1) == specs and shard(specs[:1], 2, 2) == []
    with pytest.raises(ValueError):
        shard(specs, 0, 2)


def test_ledger_merges_attempts_and_names_what_never_ran():
    ledger = Ledger()
    tests = [{"nodeid": f"t[{i}]", "clauses": [f"c.{i}"], "variant": "reentrant", "device": "cpu"} for i in range(4)]
    ledger.plan({"header": {"implementation": "m"}, "tests": tests})
    ledger.record({"event": "record", "nodeid": "t[0]", "clauses": ["c.0"], "variant": "reentrant", "device": "cpu",
                   "status": "pass", "message": "", "duration": 0.1})
    crash = ledger.died("t[1]", "crash", "died")
    ledger.plan({"header": {"implementation": "other"}, "tests": tests[2:]})  # a later attempt's plan
    assert crash.clauses == ["c.1"] and crash.variant == "reentrant"
    assert ledger.remaining() == ["t[2]", "t[3]"]
    assert ledger.died("t[1]", "timeout", "another lane") is None and ledger.records["t[1]"] is crash  # the first stands
    ledger.close_remaining("the bound expired")
    results = ledger.results(exit=1)
    assert [r.nodeid for r in results.records] == ["t[0]", "t[1]", "t[2]", "t[3]"]
    assert [r.status for r in results.records] == ["pass", "crash", "not_run", "not_run"]
    assert results.records[3].message == "the bound expired" and results.records[3].clauses == ["c.3"]
    assert results.header == {"implementation": "m", "exit": 1}


def test_a_files_streak_is_its_crashes_and_timeouts_since_its_last_pass_or_declared_failure():
    ledger = Ledger()

    def record(nodeid, status, expected=None):
        ledger.record({"nodeid": nodeid, "clauses": ["c"], "variant": "reentrant", "device": "cpu", "status": status,
                       "expected": expected})

    for nodeid, status in [("a.py::t[0]", "timeout"), ("b.py::t[0]", "pass"), ("a.py::t[1]", "fail"),
                           ("a.py::t[2]", "skip"), ("a.py::t[3]", "crash")]:
        record(nodeid, status)
    assert ledger.streak("a.py") == ["timeout", "crash"]  # another file's pass, a failure, a skip: no reset
    record("a.py::t[4]", "fail", {"kind": "deviation", "reason": "declared in expectations.toml"})
    assert ledger.streak("a.py") == [] and ledger.streak("b.py") == []


def test_follower_yields_only_complete_lines(tmp_path):
    path = tmp_path / "s.jsonl"
    follower = processes.Follower(path)
    assert list(follower.events()) == []  # not there yet
    path.write_text('{"event": "start", "nodeid": "a"}\n{"event": "rec')
    assert list(follower.events()) == [{"event": "start", "nodeid": "a"}]
    with open(path, "a") as f:
        f.write('ord", "nodeid": "a"}\n')
    assert list(follower.events()) == [{"event": "record", "nodeid": "a"}]


# ------------------------------------------- the supervisor against a scripted stand-in for pytest


def fake_run_process(pytest_args, output, conn, fork_attempts):
    """Plays a run process (worker.serve) for the supervisor, without pytest: the same pipe protocol
    and files, with tests scripted by ``--scenario=`` (nodeid -> action, in run order). An attempt
    plays each test not skipped: a start event, then by the action a record, a death (SIGKILL), a
    hang, pytest-timeout's banner and exit 1, an INTERNALERROR (results written, exit 3), an exit
    before the test starts ("exit-before"), or a pass after two seconds ("slow-pass").
    Each attempt's skip list is appended to the file ``--calls=``, its pid to ``<calls>.pids``."""
    os.setsid()
    fd = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    option = dict(arg[2:].split("=", 1) for arg in pytest_args if arg.startswith("--") and "=" in arg)
    scenario = json.loads(option["scenario"])
    deselected = [arg.split("=", 1)[1] for arg in pytest_args if arg.startswith("--deselect=")]
    tests = [{"nodeid": n, "clauses": ["c." + n], "variant": "reentrant", "device": "cpu"}
             for n in scenario if n not in deselected]
    with open(option["conformance-plan"] + ".part", "w") as f:  # atomically, as conformance.run.plan does: the
        json.dump({"header": {"implementation": "fake", "variant": "reentrant", "device": "cpu"}, "tests": tests}, f)
    os.replace(option["conformance-plan"] + ".part", option["conformance-plan"])  # supervisor reads it any time
    stream = open(option["results"][:-5] + ".jsonl", "w")

    def play(skip):
        with open(option["calls"], "a") as f:
            f.write(json.dumps(sorted(skip + deselected)) + "\n")
        with open(option["calls"] + ".pids", "a") as f:
            f.write(f"{os.getpid()}\n")
        for test in (t for t in tests if t["nodeid"] not in skip):
            action = scenario[test["nodeid"]]
            if action == "exit-before":
                os._exit(3)
            stream.write(json.dumps({"event": "start", "nodeid": test["nodeid"]}) + "\n")
            stream.flush()
            if action == "die":
                os.kill(os.getpid(), signal.SIGKILL)
            while action == "hang":
                time.sleep(1)
            if action == "slow-pass":
                time.sleep(2)
                action = "pass"
            if action == "pytest-timeout":
                print("+" * 20 + " Timeout " + "+" * 20, flush=True)
                os._exit(1)
            if action == "internal-error":  # pytest ends its session early, yet writes its results file
                print("INTERNALERROR> SystemError: AST constructor recursion depth mismatch", flush=True)
                with open(option["results"], "w") as f:
                    f.write("{}")
                os._exit(3)
            stream.write(json.dumps({"event": "record", **test, "status": action, "message": "", "duration": 0.0}) + "\n")
            stream.flush()
        with open(option["results"], "w") as f:
            f.write("{}")
        os._exit(0)

    request = conn.recv()
    if not fork_attempts:
        conn.send({"pid": os.getpid()})
        play([])
    while request is not None:
        pid = os.fork()
        if pid == 0:
            os.setpgid(0, 0)
            play(request["skip"])
        os.setpgid(pid, pid)
        conn.send({"pid": pid})
        conn.send({"exit": os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])})
        request = conn.recv()
    os._exit(0)


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(processes, "RUN_TARGET", f"{__name__}:fake_run_process")


def supervise(tmp_path, scenario, limits=Limits(test_timeout=30, run_timeout=60), device="cpu"):
    """Supervise the stand-in playing ``scenario``; device "cpu" forks attempts, "cuda" starts a process each.
    Returns the outcome, the records by node id, the header, and each attempt's skip list."""
    seen, calls = [], tmp_path / "calls.jsonl"
    outcome = supervisor.supervise(RunSpec("fake", "reentrant", device), tmp_path / "out", limits,
                                   pytest_args=[f"--scenario={json.dumps(scenario)}", f"--calls={calls}"],
                                   on_record=seen.append)
    results = read_results(outcome.path)
    assert sorted(r.nodeid for r in seen) == sorted(r.nodeid for r in results.records), "progress saw every record once"
    return outcome, {r.nodeid: r for r in results.records}, results.header, [json.loads(x) for x in calls.open()]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_crash_is_recorded_and_the_rest_still_runs(tmp_path, fake, device):
    scenario = {"t[a]": "pass", "t[b]": "die", "t[c]": "fail", "t[d]": "die", "t[e]": "pass"}
    outcome, records, header, calls = supervise(tmp_path, scenario, device=device)
    assert {n: r.status for n, r in records.items()} == {
        "t[a]": "pass", "t[b]": "crash", "t[c]": "fail", "t[d]": "crash", "t[e]": "pass"}
    assert "killed by signal SIGKILL" in records["t[b]"].message and records["t[b]"].clauses == ["c.t[b]"]
    assert calls == [[], ["t[a]", "t[b]"], ["t[a]", "t[b]", "t[c]", "t[d]"]]
    assert outcome.attempts == header["supervisor"]["attempts"] == 3
    assert "attempt 3" in outcome.log.read_text()
def test_a_session_pytest_ends_early_is_not_a_finished_run(tmp_path, fake):
    # pytest writes its results file after an INTERNALERROR too: the tests after it must still run.
    outcome, records, _, calls = supervise(tmp_path, {"t[a]": "pass", "t[b]": "internal-error", "t[c]": "pass"})
    assert {n: r.status for n, r in records.items()} == {"t[a]": "pass", "t[b]": "crash", "t[c]": "pass"}
    assert "pytest stopped on an INTERNALERROR" in records["t[b]"].message
    assert "AST constructor recursion depth mismatch" in records["t[b]"].message
    assert calls == [[], ["t[a]", "t[b]"]] and outcome.attempts == 2


def test_a_test_pytest_timeout_ended_is_a_timeout(tmp_path, fake):
    _, records, _, _ = supervise(tmp_path, {"t[a]": "pytest-timeout", "t[b]": "pass"})
    assert records["t[a]"].status == "timeout" and "pytest-timeout ended the process" in records["t[a]"].message
    assert records["t[b]"].status == "pass"


def test_a_hang_pytest_timeout_cannot_end_is_killed(tmp_path, fake):
    _, records, _, _ = supervise(tmp_path, {"t[a]": "hang", "t[b]": "pass"},
                                 Limits(test_timeout=0.5, run_timeout=60, grace=0.5))
    assert records["t[a]"].status == "timeout" and "the supervisor killed the process" in records["t[a]"].message
    assert records["t[b]"].status == "pass"


def test_after_some_timeouts_later_tests_get_the_cut_limit_and_the_message_says_so(tmp_path, fake):
    scenario = {"t[a]": "hang", "t[b]": "hang", "t[c]": "pass", "t[d]": "hang", "t[e]": "pass"}
    outcome, records, _, _ = supervise(tmp_path, scenario, Limits(test_timeout=1.5, run_timeout=60, grace=0.2,
                                                                  cut_after=2, cut_timeout=0.1, lanes=1))
    assert [r.status for r in records.values()] == ["timeout", "timeout", "pass", "timeout", "pass"]
    assert "(limit 1.5 s)" in records["t[a]"].message
    assert "limit 0.1 s, cut from 1.5 s after 2 timeouts in this run" in records["t[d]"].message
    assert records["t[d]"].duration < 1.5
    assert "===== attempt 3 (lane 1, limit 0.1 s)" in outcome.log.read_text()


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_after_the_cut_the_tests_left_wait_side_by_side_in_lanes(tmp_path, fake, device):
    scenario = {"t[a]": "hang", **{f"t[{i}]": "hang" if i % 2 else "pass" for i in range(8)}}
    started = time.monotonic()
    outcome, records, header, calls = supervise(tmp_path, scenario, Limits(
        test_timeout=0.3, run_timeout=60, grace=0.6, cut_after=1, cut_timeout=0.3, lanes=3), device=device)
    assert {n: r.status for n, r in records.items()} == {n: "pass" if a == "pass" else "timeout" for n, a in scenario.items()}
    assert list(records) == list(scenario), "records stay in run order"
    # after t[a], 8 tests left in 3 slices: [0 3 6] [1 4 7] [2 5] (hangs: 1 3 5 7). Attempts: t[a]'s; lane 1:
    # 0 3 | 6; lane 2: 1 | 4 7; lane 3: 2 5. The lanes wait for their hangs side by side.
    assert header["supervisor"]["lanes"] == 3 and outcome.attempts == 6
    assert ["t[1]", "t[2]", "t[4]", "t[5]", "t[7]", "t[a]"] in calls  # lane 1's first attempt: all but 0 3 6
    assert time.monotonic() - started < 30


def test_the_whole_run_bound_times_out_the_running_test_and_the_rest_is_not_run(tmp_path, fake):
    scenario = {"t[a]": "pass", "t[b]": "hang", "t[c]": "pass", "t[d]": "pass"}
    outcome, records, _, _ = supervise(tmp_path, scenario, Limits(test_timeout=60, run_timeout=3))
    assert [r.status for r in records.values()] == ["pass", "timeout", "not_run", "not_run"]
    assert "expired while this test ran" in records["t[b]"].message
    assert all(records[n].message.startswith("the whole-run bound of 3 s expired") for n in ("t[c]", "t[d]"))
    assert outcome.seconds < 30


def test_a_process_that_exits_between_tests_is_restarted_only_while_it_makes_progress(tmp_path, fake):
    _, records, _, calls = supervise(tmp_path, {"t[a]": "pass", "t[b]": "exit-before", "t[c]": "pass"})
    # attempt 1 recorded t[a], then exited: progress, so a restart; attempt 2 exits at once: no progress, stop.
    assert len(calls) == 2
    assert [r.status for r in records.values()] == ["pass", "not_run", "not_run"]
    assert records["t[b]"].message.startswith("pytest exited with code 3 between tests")


ABANDONING = Limits(test_timeout=30, run_timeout=60, abandon_after=3)


def test_after_k_crashes_or_timeouts_in_a_row_the_rest_of_the_file_is_not_run_and_the_next_file_runs(tmp_path, fake):
    scenario = {"a.py::t[0]": "pass", "a.py::t[1]": "die", "a.py::t[2]": "pytest-timeout", "a.py::t[3]": "die",
                "a.py::t[4]": "pass", "a.py::t[5]": "pass", "b.py::t[0]": "pass", "b.py::t[1]": "die"}
    _, records, header, calls = supervise(tmp_path, scenario, ABANDONING)
    assert {n: r.status for n, r in records.items()} == {
        "a.py::t[0]": "pass", "a.py::t[1]": "crash", "a.py::t[2]": "timeout", "a.py::t[3]": "crash",
        "a.py::t[4]": "not_run", "a.py::t[5]": "not_run", "b.py::t[0]": "pass", "b.py::t[1]": "crash"}
    assert records["a.py::t[4]"].message == records["a.py::t[5]"].message == (
        "run abandoned after 3 consecutive crashes or timeouts in a.py with no pass between (--abandon-after 3): "
        "its tests left were not run")
    assert calls[-1] == [f"a.py::t[{i}]" for i in range(6)], "the attempt after the third death skipped the file"
    assert header["supervisor"]["abandon_after"] == 3


def test_after_twice_abandon_after_files_are_abandoned_the_whole_run_is(tmp_path, fake):
    scenario = {"a.py::t[0]": "die", "b.py::t[0]": "pass", "b.py::t[1]": "die", "c.py::t[0]": "pass", "d.py::t[0]": "pass"}
    _, records, _, calls = supervise(tmp_path, scenario, Limits(test_timeout=30, run_timeout=60, abandon_after=1))
    assert [r.status for r in records.values()] == ["crash", "pass", "crash", "not_run", "not_run"]
    assert records["c.py::t[0]"].message.startswith("run abandoned after 2 of its test files were (twice --abandon-after 1)")
    assert len(calls) == 2, "no attempt after the second file was abandoned"


def test_a_pass_resets_the_count_and_an_unexpected_failure_does_not(tmp_path, fake):
    scenario = {"a.py::t[0]": "die", "a.py::t[1]": "die", "a.py::t[2]": "pass", "a.py::t[3]": "die", "a.py::t[4]": "die",
                "a.py::t[5]": "pass",
                "b.py::t[0]": "die", "b.py::t[1]": "fail", "b.py::t[2]": "die", "b.py::t[3]": "die", "b.py::t[4]": "pass"}
    _, records, _, _ = supervise(tmp_path, scenario, ABANDONING)
    assert [r.status for n, r in records.items() if n.startswith("a.py")] == [
        "crash", "crash", "pass", "crash", "crash", "pass"]
    assert [r.status for n, r in records.items() if n.startswith("b.py")] == [
        "crash", "fail", "crash", "crash", "not_run"]
    assert records["b.py::t[4]"].message.startswith("run abandoned after 3 consecutive crashes in b.py")


def test_a_correct_implementation_with_sporadic_timeouts_is_never_abandoned(tmp_path, fake):
    # four timeouts in the file, but never three in a row: after the cut the lanes' passes come between them
    scenario = {f"a.py::t[{i}]": "hang" if i in (2, 3, 9, 14) else "pass" for i in range(16)}
    _, records, _, _ = supervise(tmp_path, scenario, Limits(test_timeout=0.3, grace=0.3, run_timeout=60, cut_after=2,
                                                            cut_timeout=0.3, lanes=3, abandon_after=3))
    assert {n: r.status for n, r in records.items()} == {n: "timeout" if a == "hang" else "pass" for n, a in scenario.items()}


def test_a_test_of_an_abandoned_file_running_in_another_lane_is_stopped_at_once(tmp_path, fake):
    # a.py::t[0] times out, the cut splits the rest into two lanes: lane 1 b0 a2 b1, lane 2 a1 a3. Lane 2 hangs in
    # a1 (limit 30 s) while lane 1 passes b0 and times out in a2: a.py is abandoned and lane 2 stopped, not waited for.
    scenario = {"a.py::t[0]": "pytest-timeout", "b.py::t[0]": "slow-pass", "a.py::t[1]": "hang",
                "a.py::t[2]": "pytest-timeout", "a.py::t[3]": "pass", "b.py::t[1]": "pass"}
    outcome, records, _, _ = supervise(tmp_path, scenario, Limits(test_timeout=30, run_timeout=60, cut_after=1,
                                                                  cut_timeout=30, lanes=2, abandon_after=2))
    assert {n: r.status for n, r in records.items()} == {
        "a.py::t[0]": "timeout", "b.py::t[0]": "pass", "a.py::t[1]": "not_run", "a.py::t[2]": "timeout",
        "a.py::t[3]": "not_run", "b.py::t[1]": "pass"}
    assert records["a.py::t[1]"].message.startswith("run abandoned after 2 consecutive timeouts in a.py")
    assert "(lane 2, limit 30 s): exit -9" in outcome.log.read_text()
    assert outcome.seconds < 20


def test_the_results_file_is_written_as_the_run_goes_on(tmp_path, fake):
    scenario = {"a.py::t[0]": "pass", "a.py::t[1]": "hang", "a.py::t[2]": "pass"}
    path = tmp_path / "out" / "fake-reentrant-cpu.json"
    with ThreadPoolExecutor(max_workers=1) as pool:
        run = pool.submit(supervise, tmp_path, scenario, Limits(test_timeout=60, run_timeout=8))
        while not (path.exists() and read_results(path).records[0].status == "pass"):
            assert not run.done(), "the run ended before its results file showed its first pass"
            time.sleep(0.1)
        midway = read_results(path)
        run.result()
    assert midway.header["exit"] is None and midway.header["finished"] is None
    assert [(r.status, r.message) for r in midway.records[1:]] == [("not_run", supervisor.UNFINISHED)] * 2
    assert read_results(path).records[1].status == "timeout"


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_stopped_run_ends_its_attempts_and_leaves_its_results_as_they_stood(tmp_path, fake, device):
    stop, calls = threading.Event(), tmp_path / "calls.jsonl"
    started = time.monotonic()
    outcome = supervisor.supervise(RunSpec("fake", "reentrant", device), tmp_path / "out", Limits(test_timeout=60),
                                   pytest_args=[f"--scenario={json.dumps({'t[a]': 'pass', 't[b]': 'hang', 't[c]': 'pass'})}",
                                                f"--calls={calls}"],
                                   on_record=lambda record: stop.set(), stop=stop)  # stopped after t[a]
    assert outcome.stopped and time.monotonic() - started < 30
    results = read_results(outcome.path)
    assert results.header["exit"] is None and results.header["finished"] is None
    assert [(r.status, r.message) for r in results.records] == [("pass", ""), *[("not_run", supervisor.UNFINISHED)] * 2]
    assert outcome.attempts == 1 and not outcome.stale_declarations
    for pid in map(int, (tmp_path / "calls.jsonl.pids").read_text().split()):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # the hung attempt is gone, not only left to its test's end


def test_a_run_that_collects_nothing_is_an_error_with_pytests_reason(tmp_path, capsys):
    code = run_all([RunSpec("does.not.exist", "reentrant", "cpu")], tmp_path, Limits(test_timeout=30, run_timeout=120))
    assert code == 2
    assert "cannot import module 'does.not.exist'" in capsys.readouterr().out
    assert not list(tmp_path.glob("*.json"))


# ------------------------------------------------- real runs: the suite against broken implementations

# The three broken implementations in both variants, as the command line runs them, on the reqgrad
# clauses (few, fast tests): crash cells, a timeout cell, markup. The limit is short: torch, pytest
# and the implementation are imported before a test's clock starts.
BROKEN = ["tests.broken.kills_process", "tests.broken.hangs_in_backward", "tests.broken.markup_messages"]
TIMEOUT_S = 8
SLOW_TIMEOUT_S = 20  # a property-based test takes seconds, and more than TIMEOUT_S on a busy machine


def run_broken(out, *options) -> int:
    impls = [arg for impl in BROKEN for arg in ("--impl", impl)]
    return main(["run", *impls, "--clause", "reqgrad", "--timeout", str(TIMEOUT_S), "--slow-timeout", str(SLOW_TIMEOUT_S),
                 "-j", "2", "--out", str(out), *options,
                 # the models area's reqgrad tests are a second file of crashes (and a slow transformers import):
                 # the matrix below is the small-function suite's
                 "--", "--ignore-glob=*/test_models.py"])


@pytest.fixture(scope="module")
def broken_runs(tmp_path_factory):
    """The runs, then the report of them."""
    out = tmp_path_factory.mktemp("reports")
    code = run_broken(out)
    assert main(["report", str(out), "-o", str(out / "index.html")]) == 0
    return code, out


def _records(out, impl, variant):
    return {r.clauses[0]: r for r in read_results(out / f"{impl}-{variant}-cpu.json").records}


def test_run_exits_1_when_tests_fail_crash_or_time_out(broken_runs):
    code, _ = broken_runs
    assert code == 1


def test_a_process_killing_implementation_gets_crash_cells_until_the_file_is_abandoned_and_the_rest_of_its_matrix(
        broken_runs):
    _, out = broken_runs
    results = read_results(out / "tests.broken.kills_process-reentrant-cpu.json")
    # every reentrant reqgrad test has no input requiring grad: each crashes, until test_reqgrad.py is abandoned
    k = Limits().abandon_after
    assert [r.status for r in results.records] == ["crash"] * k + ["not_run"] * (len(results.records) - k)
    assert "SIGKILL" in results.records[0].message
    assert all(r.message.startswith(f"run abandoned after {k} consecutive crashes in test_reqgrad.py")
               for r in results.records[k:])
    # one attempt per crash (each restart begins after the test that crashed), one more if tests were left
    crashes = sum(r.status == "crash" for r in results.records)
    assert crashes <= results.header["supervisor"]["attempts"] <= crashes + 1 and results.header["torch"]
    assert _records(out, "tests.broken.kills_process", "non_reentrant")["reqgrad.non-reentrant-gradients"].status == "pass"


def test_a_backward_that_never_returns_gets_a_timeout_cell(broken_runs):
    _, out = broken_runs
    records = read_results(out / "tests.broken.hangs_in_backward-non_reentrant-cpu.json").records
    hung = {r.nodeid.split("::")[0].rsplit("/")[-1]: r for r in records if r.status == "timeout"}
    assert f"within {SLOW_TIMEOUT_S} s" in hung["test_properties.py"].message  # a slow test has its own limit
    assert f"within {TIMEOUT_S} s" in next(r for r in records if r.status == "timeout" and "properties" not in r.nodeid).message
    assert all("hangs_in_backward.py" in r.message for r in hung.values())  # pytest-timeout's stack dump names where it hung
    assert {r.status for r in _records(out, "tests.broken.hangs_in_backward", "reentrant").values()} == {"pass"}


def test_a_run_cut_short_leaves_its_results_file_with_the_tests_it_did_not_finish_not_run(tmp_path):
    # As when a CI job's time runs out: the runner is ended from outside (a SIGTERM: it stops its runs and writes
    # their results as they stand; a SIGKILL leaves the file it last wrote, alike but seconds older) while a
    # test hangs (the frozen-block tests pass, then the retain area's backward passes hang).
    runner = subprocess.Popen([sys.executable, "-m", "conformance", "run", "--impl", "tests.broken.hangs_in_backward",
                               "--variant", "non_reentrant", "--clause", "reqgrad.frozen-block-output", "--clause", "retain",
                               "--timeout", str(TIMEOUT_S), "--out", str(tmp_path)],
                              cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    path = tmp_path / "tests.broken.hangs_in_backward-non_reentrant-cpu.json"
    give_up = time.monotonic() + 120
    try:
        while not (path.exists() and any(r.status != "not_run" for r in read_results(path).records)):
            assert runner.poll() is None and time.monotonic() < give_up, "no results file showed a finished test"
            time.sleep(0.2)
    finally:
        runner.send_signal(signal.SIGTERM)
        runner.wait()
    results = read_results(path)
    assert results.header["exit"] is None and results.header["implementation"] == "tests.broken.hangs_in_backward"
    unfinished = [r for r in results.records if r.status == "not_run"]
    assert unfinished and all(r.message == supervisor.UNFINISHED for r in unfinished)


def _all_records(out):
    return [r for path in sorted(out.glob("*.json")) for r in read_results(path).records]


def _matrix(out):
    from conformance.report import build

    return build([(path.name, read_results(path)) for path in sorted(out.glob("*.json"))])


class _Page(html.parser.HTMLParser):
    """What a browser would build from the page: its elements, cells, area summary, commands, text."""

    def __init__(self, text):
        super().__init__()
        self.tags, self.cells, self.areas, self.commands, self.chunks = [], [], [], [], []
        self._in_command = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if tag == "td" and "data-verdict" in attrs:
            self.cells.append(attrs["data-verdict"])
        if tag == "td" and "data-worst" in attrs:
            self.areas.append(attrs["data-worst"])
        self._in_command = tag == "code" and attrs.get("class") == "command"

    def handle_endtag(self, tag):
        self._in_command = False

    def handle_data(self, data):
        self.chunks.append(data)
        if self._in_command:
            self.commands.append(data)

    @property
    def text(self):
        return "".join(self.chunks)


def _details(index, pattern):
    """The report's detail pages ``pattern`` (area-*.html: every clause × every run, each cell once;
    impl-*.html: the findings, each command once), as one page."""
    return _Page("".join(p.read_text() for p in sorted((index.parent / details_of(index.name)).glob(pattern))))


def test_the_report_shows_crash_and_timeout_cells_and_markup_as_text(broken_runs):
    from tests.broken.markup_messages import MARKUP

    _, out = broken_runs
    page, findings = _details(out / "index.html", "area-*.html"), _details(out / "index.html", "impl-*.html")
    # runs (results files in name order): hangs, kills, markup, each reentrant then non-reentrant; every
    # reqgrad clause binds one variant, so each column has n/a cells; each run's verdicts are its own
    cells = {(row.clause.id, column): cell.verdict for row in _matrix(out).rows if row.tested
             for column, cell in row.cells.items()}
    assert sorted(page.cells) == sorted(cells.values())
    assert {"crash", "timeout", "fail", "pass", "n/a"} <= set(page.cells)
    assert _Page((out / "index.html").read_text()).areas == ["pass", "timeout", "crash", "pass", "pass", "fail"]  # the reqgrad area, run by run
    assert all("script" not in p.tags and "b" not in p.tags for p in (page, findings))
    assert MARKUP in findings.text


def test_every_finding_has_a_repro_command_and_its_source(broken_runs):
    _, out = broken_runs
    page = _details(out / "index.html", "impl-*.html")
    findings = [r for r in _all_records(out) if r.verdict not in ("pass", "n/a")]
    groups = sum(len(_matrix(out).failures_by_cause(i)) for i in _matrix(out).implementations)
    assert len(page.commands) == len(findings) + groups > 0  # one per test that did not pass, one per cause
    # no path of the machine that ran them: `python` where the harness is importable, checkout or installed
    assert all(c.startswith("python -m pytest -p conformance.plugin --pyargs 'conformance.suite.test_") and
               "--impl=tests.broken." in c for c in page.commands)
    text = " ".join(page.text.split())
    assert "source: conformance/suite/test_reqgrad.py:" in text and "source: conformance/suite/test_properties.py:" in text


@pytest.mark.parametrize("verdict, impl", [("fail", "markup_messages"), ("crash", "kills_process")])
def test_a_repro_command_pasted_into_a_shell_reproduces_its_cell(broken_runs, verdict, impl):
    _, out = broken_runs
    command = next(c for c in _details(out / "index.html", "impl-*.html").commands if f"tests.broken.{impl}" in c)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # `python` is this interpreter
    done = subprocess.run(["bash", "-c", command], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PATH": path})
    if verdict == "fail":
        assert done.returncode == 1 and "1 failed" in done.stdout and "RuntimeError: <script>" in done.stdout
    else:
        assert done.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL), done.stdout[-2000:]


def test_shards_merged_by_report_give_the_unsharded_report(broken_runs, tmp_path):
    _, whole = broken_runs
    for i in (1, 2):
        run_broken(tmp_path / f"shard-{i}", "--shard", f"{i}/2")
    assert main(["report", str(tmp_path), "-o", str(tmp_path / "merged.html")]) == 0  # every shard-*/ results file
    assert len(list(tmp_path.glob("shard-*/*.json"))) == len(list(whole.glob("*.json"))) == 6
    assert _content(tmp_path / "merged.html") == _content(whole / "index.html")


def _content(page_path):
    """What the report says that does not depend on when and how fast it ran: cells, area summary,
    repro commands, and the matrix built from the same results."""
    matrix = build(list(_load(sorted(page_path.parent.rglob("*.json")))))
    cells = {(row.clause.id, column): (cell.verdict, sorted((r.nodeid, r.status) for r in cell.records))
             for row in matrix.rows for column, cell in row.cells.items()}
    return (sorted(_details(page_path, "area-*.html").cells), _Page(page_path.read_text()).areas,
            sorted(_details(page_path, "impl-*.html").commands), cells)


# ------------------------------------------------- the oracle's reproducer scripts outlive the run's lanes

ORACLE_MUTANT = "tests.mutants.rng.rng_forward_reseeded"  # reseeds before the forward: the random-program test fails


def test_a_runs_reproducer_scripts_are_kept_beside_its_results_and_the_report_links_them(tmp_path):
    """Issue 34: the lanes' pytest wrote the scripts into the lane's temporary folder, removed with the run."""
    out = tmp_path / "reports"
    assert main(["run", "--impl", ORACLE_MUTANT, "--variant", "non_reentrant", "--clause", "api.forward-value",
                 "--out", str(out), "--", "-k", "test_random_program", "--ignore-glob=*/test_sweep_*.py",
                 "--ignore-glob=*/test_models.py"]) == 1
    results = out / f"{ORACLE_MUTANT}-non_reentrant-cpu.json"
    [record] = [r for r in read_results(results).records if r.status == "fail"]
    script = results.parent / record.reproducer
    assert script.is_file() and script.parent == out / f"{results.stem}-reproducers"
    assert f"python {script}" in record.message  # the message names the script that is there
    assert main(["report", str(out), "-o", str(out / "index.html")]) == 0
    pages = [out / "index.html", *(out / details_of("index.html")).glob("*.html")]
    links = [(page, href) for page in pages for href in _Links(page.read_text()).hrefs]
    assert any(href.endswith(script.name) for _, href in links)
    assert [href for page, href in links if not (page.parent / href).exists()] == []


class _Links(html.parser.HTMLParser):
    """The local links of a page (without their #fragment)."""

    def __init__(self, text):
        super().__init__()
        self.hrefs = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href") or ""
        if href and "://" not in href and not href.startswith("#"):
            self.hrefs.append(urllib.parse.unquote(href.split("#")[0]))


# ------------------------------------------------------------------------ progress while the runs go on


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _record(status):
    return Record("t::a[reentrant]", Facts(["api.forward-value"], "reentrant", "cpu"), status)


@pytest.mark.parametrize("stream", [io.StringIO(), _Terminal()], ids=["log", "terminal"])
def test_each_run_in_progress_shows_its_tests_done_of_those_planned_and_its_time(stream, monkeypatch):
    """Issue 34: with several runs at a time, nothing showed until a run ended."""
    for every in ("REDRAW_EVERY_S", "LOG_EVERY_S"):  # no redraw of the ticker's between the steps below
        monkeypatch.setattr(progress_module, every, 3600.0)
    with Progress(stream, width=3) as progress:
        progress.started("one")
        progress.started("two")
        progress.planned("one", 3)
        progress.recorded("one", _record("pass"))
        progress.recorded("one", _record("fail"))
        assert re.fullmatch(r"one  2/3 tests, 1 not passed, \d+ s", progress.status("one"))
        assert re.fullmatch(r"two  0/\? tests, \d+ s", progress.status("two"))  # not collected yet
        progress.ended("one", "1 pass, 1 fail")
    if stream.isatty():  # the status lines redrawn in place: erased before the ended run's line, which stays
        assert re.search(r"\x1b\[2F\x1b\[Jone  1 pass, 1 fail\ntwo  0/\? tests, \d+ s\n\x1b\[1F\x1b\[J$", stream.getvalue())
    else:  # a log: the line of the ended run (status lines come every LOG_EVERY_S)
        assert stream.getvalue() == "one  1 pass, 1 fail\n"
