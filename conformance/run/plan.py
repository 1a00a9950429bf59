"""A pytest plugin the supervisor loads into every pytest it starts (``-p conformance.run.plan``).

After collection it writes the *plan*: the results header and every conformance test pytest is
about to run, with its clauses, variant and device. When the process then dies or hangs, the
supervisor still knows what the dead test checked and which tests never ran.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import is_hypothesis_test

from conformance.results import write_atomically

RECORDER = "conformance-recorder"  # the name conformance.plugin registers its Recorder under


def is_slow(item) -> bool:
    """A test that takes seconds, not milliseconds, and more on a loaded machine: property-based (many
    examples) or marked ``slow`` (multi-process: it spawns ranks that import torch). It gets
    ``Limits.slow_timeout``, never the cut limit."""
    return is_hypothesis_test(getattr(item, "obj", None)) or item.get_closest_marker("slow") is not None


def pytest_addoption(parser):
    parser.getgroup("conformance").addoption(
        "--conformance-plan", metavar="PATH", default=None,
        help="(used by `python -m conformance run`) write the collected tests and the header here as JSON",
    )


@pytest.hookimpl(trylast=True)  # after the plugin has put clauses/variant/device on each item
def pytest_collection_finish(session):
    path = session.config.getoption("conformance_plan")
    if not path:
        return
    recorder = session.config.pluginmanager.get_plugin(RECORDER)
    header = {**recorder.header(0), "exit": None, "finished": None} if recorder else {}
    tests = []
    for item in session.items:
        props = dict(item.user_properties)
        if "clauses" in props:
            tests.append({"nodeid": item.nodeid, "clauses": props["clauses"],
                          "variant": props.get("variant"), "device": props.get("device"),
                          "expected": props.get("expected"),
                          "slow": is_slow(item)})
    write_atomically(path, json.dumps({"header": header, "tests": tests}) + "\n")
