"""A pytest plugin the supervisor loads into every pytest it starts (``-p conformance.run.plan``).

After collection it writes the *plan*: the results header (``conformance.plugin.header``) and every
conformance test pytest is about to run, with its facts (conformance/data/facts.py: clauses, variant, device,
what is expected of it). When the process then dies or hangs, the supervisor still knows what the dead
test checked and which tests never ran.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import is_hypothesis_test

from conformance.data import facts
from conformance.plugin import header
from conformance.data.results import now
from conformance.data.results import write_atomically


def is_slow(item) -> bool:
    """A test that takes seconds, not milliseconds, and more on a loaded machine: property-based (many
    examples) or marked ``slow`` (multi-process: it spawns ranks that import torch). It gets
    ``Limits.slow_timeout`` (``Limits.slow_cut_timeout`` once the run is cut), never the ordinary cut limit."""
    return is_hypothesis_test(getattr(item, "obj", None)) or item.get_closest_marker("slow") is not None


@pytest.hookimpl(trylast=True)  # after the plugin has given each item its facts
def pytest_collection_finish(session):
    path = session.config.getoption("conformance_plan")
    if not path:
        return
    tests = [{"nodeid": item.nodeid, **test.to_json(), "slow": is_slow(item)}
             for item in session.items if (test := facts.read(item)) is not None]
    run = {**header(session.config), "started": now(), "finished": None, "exit": None}
    write_atomically(path, json.dumps({"header": run, "tests": tests}) + "\n")
