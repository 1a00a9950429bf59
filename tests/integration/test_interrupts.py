"""Nothing is left behind by an interrupted run: a SIGTERM while the distributed area's ranks run, to
pytest or to ``python -m conformance run``, leaves no process and no ``conformance-ranks-*`` folder; a
SIGKILL to the runner, which gives it no chance to clean up, still leaves no process.

Each run gets a temporary folder of its own (TMPDIR) and a mark in its environment, which every process
it starts inherits: what is left is what that folder holds, and the processes that carry the mark
(Linux's /proc). Whatever a failing check leaves, the test itself kills and removes.
"""

import contextlib
import os
import signal
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from conformance.data.results import read_results

REPO = Path(__file__).resolve().parents[2]
MARK = "CONFORMANCE_INTERRUPT_MARK"
START_S = 240  # until the ranks have started: torch imported by the runner, the suite collected, two ranks spawned
END_S = 60  # from the SIGTERM until the interrupted command has exited (the runner's stop grace is 10 s)

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(),
                                reason="finds the processes a run left by their environment, in Linux's /proc")


def marked(mark: str) -> list[int]:
    """The live processes whose environment carries the mark (a zombie's environment reads empty)."""
    entry = f"{MARK}={mark}".encode()
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and entry in (proc / "environ").read_bytes().split(b"\0"):
                pids.append(int(proc.name))
        except OSError:  # ended meanwhile, or not ours to read
            pass
    return pids


@pytest.fixture
def short_temp():
    """A temporary folder with a short path: the fork server's socket lives under TMPDIR, and a Unix
    socket's path has at most 107 bytes, which tox's TMPDIR (``.tox/<env>/tmp``) plus pytest's
    ``tmp_path`` exceed."""
    temp = Path(tempfile.mkdtemp(prefix="ci-", dir="/tmp"))
    yield temp
    shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture
def interrupted(tmp_path, short_temp):
    """Runs a command in its own temporary folder, with a mark, until the distributed area's ranks have
    started; sends it a signal (SIGTERM); returns its exit code, its temporary folder, what it printed, and
    the mark. Kills whatever carries the mark afterwards, whatever the test found."""
    temp, mark = short_temp, uuid.uuid4().hex
    output = tmp_path / "output.txt"
    started = []

    def interrupt(command: list[str], signum: int = signal.SIGTERM):
        with open(output, "wb") as out:
            process = subprocess.Popen(command, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                       env={**os.environ, "TMPDIR": str(temp), MARK: mark})
        started.append(process)
        give_up = time.monotonic() + START_S
        # the ranks are up, or coming up (under `conformance run`, in its scratch folder inside temp)
        while not list(temp.glob("**/conformance-ranks-*/rank*.log")):
            assert process.poll() is None, f"ended before its ranks started:\n{output.read_text()[-3000:]}"
            assert time.monotonic() < give_up, f"no ranks within {START_S} s:\n{output.read_text()[-3000:]}"
            time.sleep(0.1)
        time.sleep(1)
        process.send_signal(signum)
        try:
            code = process.wait(END_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {END_S} s after its {signal.Signals(signum).name}:\n"
                        f"{output.read_text()[-3000:]}")
        return code, temp, output.read_text(), mark

    yield interrupt
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()
    for pid in marked(mark):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def assert_no_process_left(mark: str, output: str) -> None:
    # the runner's fork server ends once the runner and its children have gone: seconds on a loaded machine
    give_up = time.monotonic() + 30
    while marked(mark) and time.monotonic() < give_up:
        time.sleep(0.1)
    left = {}
    for pid in marked(mark):
        with contextlib.suppress(OSError):
            left[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:200]
    assert not left, f"processes left running: {left}\n{output[-3000:]}"


def assert_nothing_left(temp: Path, mark: str, output: str) -> None:
    assert_no_process_left(mark, output)
    assert not list(temp.glob("conformance-*")), f"left in the temporary folder: {sorted(temp.iterdir())}"


def test_a_sigterm_to_pytest_in_the_distributed_area_leaves_no_rank_and_no_folder(interrupted):
    code, temp, output, mark = interrupted([
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--impl=torch.utils.checkpoint",
        "--device=cpu", "conformance/suite/test_distributed.py"])
    assert_nothing_left(temp, mark, output)
    assert code == pytest.ExitCode.INTERRUPTED, output[-3000:]  # ended as by Ctrl-C: fixtures torn down


def test_a_sigterm_to_conformance_run_leaves_no_process_and_no_folder_and_its_results(interrupted, tmp_path):
    out = tmp_path / "out"
    code, temp, output, mark = interrupted([
        sys.executable, "-m", "conformance", "run", "--impl", "torch.utils.checkpoint", "--variant", "non_reentrant",
        "--clause", "distributed", "--out", str(out)])
    assert_nothing_left(temp, mark, output)
    assert code == 128 + signal.SIGTERM and "stopped by SIGTERM" in output, output[-3000:]
    results = read_results(out / "torch.utils.checkpoint-non_reentrant-cpu.json")
    assert results.header["exit"] is None and any(r.status == "not_run" for r in results.records)


def test_a_sigkill_to_conformance_run_leaves_no_process(interrupted, tmp_path):
    # Its lanes end with it (worker.AttemptServer watches the pipe from the runner); what they had in the
    # temporary folder stays: a SIGKILL lets no process clean up.
    code, _, output, mark = interrupted([
        sys.executable, "-m", "conformance", "run", "--impl", "torch.utils.checkpoint", "--variant", "non_reentrant",
        "--clause", "distributed", "--out", str(tmp_path / "out")], signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert_no_process_left(mark, output)


def test_a_test_the_runner_stops_for_its_time_leaves_no_folder(short_temp, tmp_path):
    """The runner kills an attempt whose test outlives --timeout (here: while the ranks start), which gives
    the test no chance to remove its rank folder: the run's scratch folder, removed with the run, holds it."""
    mark = uuid.uuid4().hex
    done = subprocess.run([
        sys.executable, "-m", "conformance", "run", "--impl", "torch.utils.checkpoint", "--variant", "non_reentrant",
        "--clause", "distributed", "--timeout", "1", "--slow-timeout", "1", "--out", str(tmp_path / "out")],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600,
        env={**os.environ, "TMPDIR": str(short_temp), MARK: mark})
    results = read_results(tmp_path / "out" / "torch.utils.checkpoint-non_reentrant-cpu.json")
    assert any(r.status == "timeout" for r in results.records), done.stdout[-3000:]  # some test was stopped
    assert_nothing_left(short_temp, mark, done.stdout)
