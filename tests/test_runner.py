"""`python -m conformance run`: supervised pytest runs that survive crashes and hangs.

Two layers: the supervisor's bookkeeping against a scripted stand-in for pytest (fast, exact), and
real runs of the suite against the broken implementations in tests/broken (crash, hang, markup).
"""

import html.parser
import json
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.__main__ import main
from conformance.results import read_results
from conformance.run import Limits, RunSpec, expand, run_all, supervisor
from conformance.run.ledger import Ledger

REPO = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------------ bookkeeping (no processes)


def test_expand_runs_each_variant_and_device_on_its_own():
    specs = expand(["a", "b", "a"], ["both"], ["cpu"])
    assert [(s.impl, s.variant, s.device) for s in specs] == [
        ("a", "reentrant", "cpu"), ("a", "non_reentrant", "cpu"), ("b", "reentrant", "cpu"), ("b", "non_reentrant", "cpu")]
    assert [(s.variant, s.device) for s in expand(["a"], ["reentrant"], ["all"])] == [("reentrant", "cpu"), ("reentrant", "cuda")]
    assert RunSpec("torch.utils.checkpoint", "reentrant", "cpu").name == "torch.utils.checkpoint-reentrant-cpu"


def test_pytest_command_is_a_fresh_process_with_thread_timeouts_and_deselections_from_a_file(tmp_path):
    command = supervisor.pytest_command(RunSpec("m", "reentrant", "cuda"), tmp_path / "r.json", tmp_path / "p.json",
                                        tmp_path / "a.args", Limits(test_timeout=7), clauses=["api"], pytest_args=["-x"])
    assert command[:3] == [sys.executable, "-m", "pytest"]
    for arg in ("--impl=m", "--variant=reentrant", "--device=cuda", "--timeout=7", "--timeout-method=thread",
                "-p", "no:cacheprovider", "--clause=api", "-x", f"@{tmp_path / 'a.args'}", f"--results={tmp_path / 'r.json'}"):
        assert arg in command


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
    ledger.close_remaining("not_run", "the run was stopped")
    results = ledger.results(exit=1)
    assert [r.nodeid for r in results.records] == ["t[0]", "t[1]", "t[2]", "t[3]"]
    assert [r.status for r in results.records] == ["pass", "crash", "not_run", "not_run"]
    assert results.header == {"implementation": "m", "exit": 1}


def test_follower_yields_only_complete_lines(tmp_path):
    path = tmp_path / "s.jsonl"
    follower = supervisor._Follower(path)
    assert list(follower.events()) == []  # not there yet
    path.write_text('{"event": "start", "nodeid": "a"}\n{"event": "rec')
    assert list(follower.events()) == [{"event": "start", "nodeid": "a"}]
    with open(path, "a") as f:
        f.write('ord", "nodeid": "a"}\n')
    assert list(follower.events()) == [{"event": "record", "nodeid": "a"}]


# ------------------------------------------- the supervisor against a scripted stand-in for pytest

# Plays pytest for the supervisor: writes the plan, then for each test not deselected a start event
# and, by the scenario, a record, a death (SIGKILL), a hang, pytest-timeout's banner and exit 1, or
# an exit before the test starts ("exit-before").
FAKE_PYTEST = textwrap.dedent('''
    import json, os, signal, sys, time
    results, plan, argsfile, scenario = sys.argv[1:5]
    scenario = json.loads(scenario)
    skip = {line.split("=", 1)[1] for line in open(argsfile).read().splitlines() if line}
    tests = [{"nodeid": n, "clauses": ["c." + n], "variant": "reentrant", "device": "cpu"} for n in scenario if n not in skip]
    json.dump({"header": {"implementation": "fake", "variant": "reentrant", "device": "cpu"}, "tests": tests}, open(plan, "w"))
    stream = open(results[:-5] + ".jsonl", "w")
    def emit(event):
        stream.write(json.dumps(event) + "\\n"); stream.flush()
    for test in tests:
        action = scenario[test["nodeid"]]
        if action == "exit-before":
            os._exit(3)
        emit({"event": "start", "nodeid": test["nodeid"]})
        if action == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        if action == "hang":
            while True: time.sleep(1)
        if action == "pytest-timeout":
            print("+" * 20 + " Timeout " + "+" * 20, flush=True); os._exit(1)
        emit({"event": "record", **test, "status": action, "message": "", "duration": 0.0})
    open(results, "w").write("{}")
''')


@pytest.fixture
def fake_pytest(tmp_path, monkeypatch):
    """Makes the supervisor start the stand-in, playing ``scenario`` (nodeid -> action, in run order)."""
    script = tmp_path / "fake_pytest.py"
    script.write_text(FAKE_PYTEST)
    calls = []

    def play(scenario):
        def command(spec, results, plan, argsfile, limits, clauses=(), pytest_args=()):
            calls.append(argsfile.read_text().splitlines())
            return [sys.executable, str(script), str(results), str(plan), str(argsfile), json.dumps(scenario)]

        monkeypatch.setattr(supervisor, "pytest_command", command)
        return calls

    return play


def supervise(tmp_path, limits=Limits(test_timeout=30, run_timeout=60)):
    seen = []
    outcome = supervisor.supervise(RunSpec("fake", "reentrant", "cpu"), tmp_path / "out", limits, on_record=seen.append)
    results = read_results(outcome.path)
    assert [r.nodeid for r in seen] == [r.nodeid for r in results.records], "progress saw every record once"
    return outcome, {r.nodeid: r for r in results.records}, results.header


def test_a_crash_is_recorded_and_the_rest_still_runs(tmp_path, fake_pytest):
    calls = fake_pytest({"t[a]": "pass", "t[b]": "die", "t[c]": "fail", "t[d]": "die", "t[e]": "pass"})
    outcome, records, header = supervise(tmp_path)
    assert {n: r.status for n, r in records.items()} == {
        "t[a]": "pass", "t[b]": "crash", "t[c]": "fail", "t[d]": "crash", "t[e]": "pass"}
    assert "killed by signal SIGKILL" in records["t[b]"].message and records["t[b]"].clauses == ["c.t[b]"]
    assert calls == [[], ["--deselect=t[a]", "--deselect=t[b]"],
                     ["--deselect=t[a]", "--deselect=t[b]", "--deselect=t[c]", "--deselect=t[d]"]]
    assert outcome.attempts == header["supervisor"]["attempts"] == 3
    assert "attempt 3" in outcome.log.read_text()


def test_a_test_pytest_timeout_ended_is_a_timeout(tmp_path, fake_pytest):
    fake_pytest({"t[a]": "pytest-timeout", "t[b]": "pass"})
    _, records, _ = supervise(tmp_path)
    assert records["t[a]"].status == "timeout" and "pytest-timeout ended the process" in records["t[a]"].message
    assert records["t[b]"].status == "pass"


def test_a_hang_pytest_timeout_cannot_end_is_killed(tmp_path, fake_pytest):
    fake_pytest({"t[a]": "hang", "t[b]": "pass"})
    _, records, _ = supervise(tmp_path, Limits(test_timeout=0.5, run_timeout=60, grace=0.5))
    assert records["t[a]"].status == "timeout" and "the supervisor killed the process" in records["t[a]"].message
    assert records["t[b]"].status == "pass"


def test_the_whole_run_bound_times_out_the_running_test_and_every_test_left(tmp_path, fake_pytest):
    fake_pytest({"t[a]": "pass", "t[b]": "hang", "t[c]": "pass", "t[d]": "pass"})
    outcome, records, _ = supervise(tmp_path, Limits(test_timeout=60, run_timeout=3))
    assert [r.status for r in records.values()] == ["pass", "timeout", "not_run", "not_run"]
    assert "expired while this test ran" in records["t[b]"].message
    assert all(records[n].message.startswith("the whole-run bound of 3 s expired") for n in ("t[c]", "t[d]"))
    assert outcome.seconds < 30


def test_a_process_that_exits_between_tests_is_restarted_only_while_it_makes_progress(tmp_path, fake_pytest):
    calls = fake_pytest({"t[a]": "pass", "t[b]": "exit-before", "t[c]": "pass"})
    _, records, _ = supervise(tmp_path)
    # attempt 1 recorded t[a], then exited: progress, so a restart; attempt 2 exits at once: no progress, stop.
    assert len(calls) == 2
    assert [r.status for r in records.values()] == ["pass", "not_run", "not_run"]
    assert records["t[b]"].message.startswith("pytest exited with code 3 between tests")


def test_a_run_that_collects_nothing_is_an_error_with_pytests_reason(tmp_path, capsys):
    code = run_all([RunSpec("does.not.exist", "reentrant", "cpu")], tmp_path, Limits(test_timeout=30, run_timeout=120))
    assert code == 2
    assert "cannot import module 'does.not.exist'" in capsys.readouterr().out
    assert not list(tmp_path.glob("*.json"))


# ------------------------------------------------- real runs: the suite against broken implementations

# The runs: the crashing one in both variants (its non-reentrant run must be unaffected), the others
# in the variant where they break. The timeout leaves room for torch's lazy imports in a first test.
BROKEN_RUNS = [RunSpec("tests.broken.kills_process", "reentrant", "cpu"),
               RunSpec("tests.broken.kills_process", "non_reentrant", "cpu"),
               RunSpec("tests.broken.hangs_in_backward", "non_reentrant", "cpu"),
               RunSpec("tests.broken.markup_messages", "non_reentrant", "cpu")]
TIMEOUT_S = 15


@pytest.fixture(scope="module")
def broken_runs(tmp_path_factory):
    """The reqgrad clauses (few, fast tests) against the broken implementations, then the report."""
    out = tmp_path_factory.mktemp("reports")
    code = run_all(BROKEN_RUNS, out, Limits(test_timeout=TIMEOUT_S, run_timeout=240), clauses=["reqgrad"], jobs=2)
    assert main(["report", *map(str, sorted(out.glob("*.json"))), "-o", str(out / "index.html")]) == 0
    return code, out


def _records(out, impl, variant):
    return {r.clauses[0]: r for r in read_results(out / f"{impl}-{variant}-cpu.json").records}


def test_run_exits_1_when_tests_fail_crash_or_time_out(broken_runs):
    code, _ = broken_runs
    assert code == 1


def test_a_process_killing_implementation_gets_crash_cells_and_the_rest_of_its_matrix(broken_runs):
    _, out = broken_runs
    reentrant = _records(out, "tests.broken.kills_process", "reentrant")
    assert {c: r.status for c, r in reentrant.items()} == {
        "reqgrad.reentrant-warns": "crash", "reqgrad.reentrant-no-gradients": "crash"}
    assert "SIGKILL" in reentrant["reqgrad.reentrant-warns"].message
    header = read_results(out / "tests.broken.kills_process-reentrant-cpu.json").header
    # one attempt per crash: the second starts after the first crashed test and ends with the second
    assert header["supervisor"]["attempts"] == 2 and header["torch"]
    assert _records(out, "tests.broken.kills_process", "non_reentrant")["reqgrad.non-reentrant-gradients"].status == "pass"


def test_a_backward_that_never_returns_gets_a_timeout_cell(broken_runs):
    _, out = broken_runs
    hung = _records(out, "tests.broken.hangs_in_backward", "non_reentrant")["reqgrad.non-reentrant-gradients"]
    assert hung.status == "timeout" and f"within {TIMEOUT_S} s" in hung.message
    assert "hangs_in_backward.py" in hung.message  # pytest-timeout's stack dump names where it hung


class _Page(html.parser.HTMLParser):
    """What a browser would build from the page: its elements and its text."""

    def __init__(self, text):
        super().__init__()
        self.tags, self.cells, self.chunks = [], [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if tag == "td" and "data-verdict" in attrs:
            self.cells.append(attrs["data-verdict"])

    def handle_data(self, data):
        self.chunks.append(data)

    @property
    def text(self):
        return "".join(self.chunks)


def test_the_report_shows_crash_and_timeout_cells_and_markup_as_text(broken_runs):
    from tests.broken.markup_messages import MARKUP

    _, out = broken_runs
    page = _Page((out / "index.html").read_text())
    assert sorted(page.cells) == sorted(["crash", "crash", "pass"] + ["timeout", "fail"] + ["n/a"] * 7)
    assert "not_run" not in page.cells  # every reqgrad clause got a verdict in every run that binds it
    assert "script" not in page.tags and "b" not in page.tags
    assert MARKUP in page.text
