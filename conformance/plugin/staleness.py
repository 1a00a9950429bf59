"""Declarations that went stale: a run of a whole row fails when a declared breakage (or a deviation declared by
cause) covers tests of the run but explains none of their failures (:func:`conformance.data.expectations.stale_declarations`).

Judged once per run, from the records of every test of it: in a pytest session, those the recorder
(conformance/plugin/recording.py) built from the reports it received (under pytest-xdist, the controller's, which
receives every worker's); in ``python -m conformance run``, by the supervisor from the records of its attempts merged,
each attempt running part of the row: the runner blocks this plugin in them (``-p no:conformance-staleness``).

Registered by conformance/plugin/__init__.py, as :data:`NAME`.
"""

from __future__ import annotations

from typing import Callable

import torch

from conformance.data import expectations
from conformance.data.results import Record, Results

NAME = "conformance-staleness"


class Staleness:
    """``records`` gives the session's records; ``impl`` the implementation's id and ``load`` the declarations, asked
    at the end of the session (a run of the harness's own self-tests never loads an implementation)."""

    def __init__(self, config, records: Callable[[], list[Record]], impl: Callable[[], str],
                 load: Callable[[], expectations.Expectations]):
        self.config, self._records, self._impl, self._load = config, records, impl, load
        self._stale: list | None = None

    def declarations(self) -> list:
        """Only a whole row's session can tell: one narrowed to some clauses or names may hold none of the row's
        failing tests."""
        if self._stale is None:
            options = self.config.getoption
            records = self._records()
            whole_row = not (options("clause") or options("keyword") or options("markexpr"))
            self._stale = expectations.stale_declarations(
                Results({"implementation": self._impl(), "torch": torch.__version__}, records),
                expectations.run_level(self._load())) if whole_row and records else []
        return self._stale

    def pytest_sessionfinish(self, session, exitstatus):
        if self.declarations() and session.exitstatus == 0:
            session.exitstatus = 1

    def pytest_terminal_summary(self, terminalreporter, config):
        for declaration in self.declarations():
            terminalreporter.line(expectations.stale_message(declaration), red=True)
