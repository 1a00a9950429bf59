"""What one supervised run is (:class:`RunSpec`) and the limits it runs under (:class:`Limits`): the
per-test limit and its cut after repeated timeouts, the lanes, when a test file is judged hopeless, and
the whole-run bound. Plain data, no processes: the command line reads the defaults from here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunSpec:
    impl: str
    variant: str  # reentrant | non_reentrant | both
    device: str  # cpu | cuda | all

    @property
    def name(self) -> str:
        return f"{self.impl}-{self.variant}-{self.device}"


@dataclass(frozen=True)
class Limits:
    test_timeout: float = 10.0  # per test, enforced by pytest-timeout (method thread) in the attempt
    run_timeout: float = 1800.0  # per run, across all its attempts, enforced here
    grace: float = 5.0  # how long past its limit a test may still run before we kill the attempt
    cut_after: int = 2  # timeouts in a run after which ...
    cut_timeout: float = 5.0  # ... later tests get this limit instead (most take milliseconds)
    slow_timeout: float = 60.0  # per slow test (plan.is_slow: property-based, multi-process), cut less: they
    # take seconds at idle and tens of seconds on a loaded 2-core machine (docs/MEASUREMENTS.md, "The runner's limits")
    slow_cut_timeout: float = 20.0  # a slow test's limit once the run is cut: an implementation that hung twice hangs
    # its property tests too, while a correct one's take seconds at idle; the cut comes only after timeouts
    lanes: int = 6  # ... and the tests left run in this many lanes side by side (hung tests only wait)
    abandon_after: int = 3  # crashes or timeouts in a row in one test file, with no pass between, after which
    # its tests left are not run (0: never): a hopeless file would cost a limit per test, and the sweeps hold
    # thousands of tests; a correct implementation passes between its few sporadic timeouts, so it never gets here.
    # 3, not 5: the files of an implementation that hangs in every backward mix hangs with quick passes (the runs
    # each gives: docs/MEASUREMENTS.md, "The runner's limits")

    @property
    def slow_limit(self) -> float:
        """A slow test's limit: never less than an ordinary test's (a raised --timeout raises it too)."""
        return max(self.slow_timeout, self.test_timeout)

    def slow_limit_under(self, limit: float) -> float:
        """A slow test's limit in an attempt whose ordinary tests get ``limit``: cut when theirs is."""
        return self.slow_limit if limit >= self.test_timeout else min(self.slow_limit, max(limit, self.slow_cut_timeout))

    def for_run(self, timeouts: int) -> float:
        """The per-test limit once a run has had ``timeouts`` timeouts."""
        return min(self.test_timeout, self.cut_timeout) if timeouts >= self.cut_after else self.test_timeout

    def abandons(self, streak: list[str], abandoned_files: int = 0) -> bool:
        """Whether a test file whose last tests crashed or timed out as ``streak`` says is hopeless. Giving up
        scales with the run, not with the suite's size: once the run has abandoned ``abandon_after`` files, the
        implementation has shown that it dies, and each later file is abandoned at its first death."""
        if self.abandon_after <= 0:
            return False
        return len(streak) >= (1 if abandoned_files >= self.abandon_after else self.abandon_after)

    def abandons_run(self, abandoned_files: int) -> bool:
        """Whether a run that has abandoned ``abandoned_files`` test files is given up on as a whole: at twice
        ``abandon_after`` the implementation dies wherever it is tested (one that hangs in every backward of a
        variant cost 306 s of attempts before this, a file at a time), while one whose deaths keep to a few
        areas (no process groups, no SAC) keeps the rest of its matrix."""
        return self.abandon_after > 0 and abandoned_files >= 2 * self.abandon_after
