"""The processes a run is made of, and how a restart after a crash stays cheap.

Three levels, each a fork of the one above, so that nothing is imported twice:

* the **zygote**: multiprocessing's fork server, started once per ``python -m conformance run``
  with torch, pytest and hypothesis imported (``PRELOAD``), and what torch imports lazily on the
  first checkpoint (torch._dynamo: seconds, which must not count against a test's limit, in every
  attempt). It imports no implementation, collects no test and never initialises CUDA (importing
  torch does not), so forking it is always safe.
* the **run process**, one per (implementation, variant, device): a fork of the zygote that runs
  ``pytest.main`` in-process. It imports the implementation and collects the suite, then stops
  before the first test (:class:`AttemptServer`): an implementation that poisons global state can
  only poison its own run.
* the **attempts**: on request of the supervisor, the run process forks a child that runs the
  tests not yet recorded and finishes the pytest session (results file, summary). When it dies
  (crash, pytest-timeout's exit, the supervisor's kill), the next attempt is one more fork of the
  collected run process: a restart costs milliseconds, not a torch import and a collection.

CUDA: forking after CUDA is initialised is unsafe, and collection already touches CUDA where a GPU
exists (``torch.cuda.is_available()``). So the attempt fork is used only for CPU runs, and every
process here asks CUDA's availability through NVML, which is fork-safe
(``PYTORCH_NVML_BASED_CUDA_CHECK``). A run with ``--device=cuda`` / ``all`` runs its tests in the
run process itself: each of its attempts is a fresh run process forked from the zygote, and CUDA
is initialised there, never in the zygote. (Not exercised on a GPU yet: no GPU where this was written.)

Threads: every process here computes on one intra-op thread (``OMP_NUM_THREADS=1``, set before the zygote
imports torch). OpenMP's pool does not survive a fork: an attempt forked after its run process ran a
parallel op would hang in its own first one.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading

import pytest

from conformance.data.vocabulary import SCRATCH_ENV

# A module that does not import is left out (numpy is optional for torch).
PRELOAD = ["torch", "torch._dynamo", "torch.onnx", "numpy", "pytest", "hypothesis", "pytest_timeout", "conformance.run.worker"]
WATCH_S = 0.05  # where no pidfd tells a run process at once that its attempt ended: how often it looks
_context = None


def zygote():
    """The fork-server context (started at its first use, ended when this process exits)."""
    global _context
    if _context is None:
        # torch.cuda.is_available() then asks NVML, which is fork-safe, instead of initialising the CUDA
        # driver (which a fork cannot inherit): in the zygote, should a preloaded module ask, and in CPU runs.
        os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
        # One intra-op thread in every process here: an attempt is a fork of a run process that may already
        # have started OpenMP's thread pool (collection computes), and a forked child's first parallel op
        # then waits forever for threads it does not have (property-based tests hung in F.linear).
        os.environ["OMP_NUM_THREADS"] = "1"
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(PRELOAD)
    return _context


def start_run_process(target, pytest_args: list[str], output: str, fork_attempts: bool):
    """A run process (see above; ``target`` is :func:`serve`, or a test's stand-in) and the
    supervisor's end of the pipe it talks through."""
    ours, theirs = zygote().Pipe()
    process = zygote().Process(target=target, args=(pytest_args, output, theirs, fork_attempts), name="conformance-run")
    process.start()
    theirs.close()
    return process, ours


def serve(pytest_args: list[str], output: str, conn, fork_attempts: bool) -> None:
    """The run process's body: pytest in-process, all output to ``output`` (appended)."""
    os.setsid()  # its own session and process group: the supervisor can end it and its helpers whole
    os.environ[SCRATCH_ENV] = os.path.dirname(output)  # the lane's folder, removed with the run
    fd = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    import pytest

    code = pytest.main(pytest_args, plugins=[AttemptServer(conn, fork_attempts)])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))


class AttemptServer:
    """A pytest plugin object in the run process: after collection, runs the tests in attempts.

    Requests from the supervisor: ``{"skip": [nodeid, ...], "timeout": s, "slow_timeout": s}``
    (run the tests not in skip; each under ``timeout``, slow ones (plan.is_slow) under
    ``slow_timeout``), or None (stop). Answers: ``{"pid": ...}`` when an attempt started (its
    own process group), ``{"exit": code}`` when it ended. Without ``fork_attempts`` the run process
    is the one attempt: it takes one request, answers its own pid and runs the tests itself.

    Nothing comes from the supervisor while an attempt runs, unless it is ending the run (None), or it
    has died: a SIGKILL gives it no chance to end its runs, and the fork server (the run process's
    parent) lives on while they do. Either way the attempt and this process end with whatever they
    started: no lane outlives the supervisor.
    """

    def __init__(self, conn, fork_attempts: bool):
        self.conn, self.fork_attempts = conn, fork_attempts

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        option = session.config.option
        if option.collectonly or (session.testsfailed and not option.continue_on_collection_errors):
            return None  # pytest's own loop handles these (it runs nothing)
        sys.stdout.flush()
        sys.stderr.flush()
        request = self._next_request()
        if not self.fork_attempts:
            self.conn.send({"pid": os.getpid()})
            threading.Thread(target=self._end_when_the_supervisor_ends, daemon=True).start()
            _prepare(session, request)
            return None
        while request is not None:
            pid = os.fork()
            if pid == 0:
                os.setpgid(0, 0)
                self.conn.close()
                _prepare(session, request)
                return None  # pytest's own loop runs what is left, then finishes the session
            try:
                os.setpgid(pid, pid)  # also here: the supervisor may kill the group before the child ran
            except OSError:
                pass
            self.conn.send({"pid": pid})
            status = self._wait_for(pid)
            self.conn.send({"exit": os.waitstatus_to_exitcode(status)})
            request = self._next_request()
        os._exit(0)  # never finish this session: only attempts write results

    def _wait_for(self, attempt: int) -> int:
        """The attempt's wait status; should the supervisor end the run or die meanwhile, end it and this process."""
        exited = _exit_notice(attempt)
        try:
            while True:
                pid, status = os.waitpid(attempt, os.WNOHANG)
                if pid:
                    return status
                ready = multiprocessing.connection.wait([self.conn, *exited], timeout=None if exited else WATCH_S)
                if self.conn in ready:  # a None, or the end of the pipe
                    _end_group(attempt)
                    os._exit(0)
        finally:
            for fd in exited:
                os.close(fd)

    def _end_when_the_supervisor_ends(self) -> None:
        """A thread of a run process that is its own attempt: at a None or the end of the pipe, end it all."""
        self.conn.poll(None)
        _end_group(os.getpid())

    def _next_request(self):
        try:
            return self.conn.recv()
        except EOFError:  # the supervisor is gone
            os._exit(0)


def _exit_notice(pid: int) -> list[int]:
    """A file descriptor that becomes readable when the child ``pid`` exits (Linux's pidfd), if there is one."""
    try:
        return [os.pidfd_open(pid)]
    except (AttributeError, OSError):
        return []


def _end_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _prepare(session, request) -> None:
    """Keep the tests the attempt is to run, each with its limit (a marker beats --timeout)."""
    from conformance.run.plan import is_slow

    skip = set(request["skip"])
    session.items[:] = [item for item in session.items if item.nodeid not in skip]
    for item in session.items:
        item.add_marker(pytest.mark.timeout(request["slow_timeout"] if is_slow(item) else request["timeout"]))
