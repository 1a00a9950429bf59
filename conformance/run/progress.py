"""What ``python -m conformance run`` shows while its runs go on, however many run at a time: for each run in
progress, the tests done of those planned and the time since it started; a line per run when it ends.

On a terminal the runs in progress are status lines redrawn in place, below the lines of the runs that ended.
Elsewhere (a CI log, a pipe) they are printed every ``LOG_EVERY_S`` seconds, a line per run in progress.
"""

from __future__ import annotations

import shutil
import threading
import time

from conformance.data.results import Record

REDRAW_EVERY_S = 0.5  # on a terminal
LOG_EVERY_S = 15.0  # elsewhere: lines that stay, so not too many
_UP_AND_CLEAR = "\x1b[{n}F\x1b[J"  # ANSI: to the start of the line n lines up, and clear from there down


class _State:
    def __init__(self):
        self.started = time.monotonic()
        self.done, self.planned = 0, None
        self.failed = 0  # tests that did not pass nor skip (whatever their verdict)


class Progress:
    """Hears of runs starting, planning, recording and ending (from their threads), and draws them."""

    def __init__(self, stream, width: int):
        self.stream, self.width = stream, width
        self.terminal = stream.isatty()
        self.lock = threading.Lock()
        self.running: dict[str, _State] = {}  # label -> state, in the order the runs started
        self.drawn = 0  # status lines on the terminal below the last line that stays
        self.stopped = threading.Event()
        self.ticker = threading.Thread(target=self._tick, daemon=True, name="conformance-progress")

    def __enter__(self) -> "Progress":
        self.ticker.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.ticker.join()
        with self.lock:
            self._erase()
            self.stream.flush()

    def started(self, label: str) -> None:
        with self.lock:
            self.running[label] = _State()
            self._draw()

    def planned(self, label: str, tests: int) -> None:
        with self.lock:
            self.running[label].planned = tests

    def recorded(self, label: str, record: Record) -> None:
        with self.lock:
            state = self.running[label]
            state.done += 1
            state.failed += record.status not in ("pass", "skip")

    def ended(self, label: str, line: str) -> None:
        """The run ended: ``line`` (its summary) stays."""
        with self.lock:
            self.running.pop(label, None)
            self._erase()
            self.stream.write(f"{label:<{self.width}}  {line}\n")
            self._draw()

    def status(self, label: str) -> str:
        state = self.running[label]
        planned = "?" if state.planned is None else state.planned  # not collected yet
        failed = f", {state.failed} not passed" if state.failed else ""
        return f"{label:<{self.width}}  {state.done}/{planned} tests{failed}, {time.monotonic() - state.started:.0f} s"

    def _tick(self) -> None:
        while not self.stopped.wait(REDRAW_EVERY_S if self.terminal else LOG_EVERY_S):
            with self.lock:
                if self.terminal:
                    self._erase()
                self._draw(always=True)

    def _draw(self, always: bool = False) -> None:
        """On a terminal, the status lines (until the next erase); elsewhere only when the ticker asks."""
        if not (self.terminal or always):
            return
        lines = [self.status(label) for label in self.running]
        if self.terminal:  # a line that wraps would take two: the erase counts one
            columns = shutil.get_terminal_size().columns - 1
            lines = [line[:columns] for line in lines]
        self.stream.write("".join(f"{line}\n" for line in lines))
        self.stream.flush()
        self.drawn = len(lines) if self.terminal else 0

    def _erase(self) -> None:
        if self.drawn:
            self.stream.write(_UP_AND_CLEAR.format(n=self.drawn))
            self.drawn = 0
