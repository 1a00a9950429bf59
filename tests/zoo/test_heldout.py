"""The held-out set (tests/heldout/) is what it says: each module is broken, and broken the way its report says,
so that a miss of the suite is the suite's (benchmarks/heldout.py measures how many it flags)."""

import logging

import pytest
import torch.utils.checkpoint

from tests.heldout import heldout_names, load


def test_the_held_out_set_has_at_least_twenty_bugs_each_from_its_own_report():
    modules = [load(name) for name in heldout_names()]
    assert len(modules) >= 20
    for module in modules:
        assert module.REPORT and module.KIND and module.BREAKS, module.__name__
        assert "https://" in module.__doc__, f"{module.__name__}: its docstring gives the report's address"


@pytest.mark.parametrize("name", heldout_names())
def test_each_held_out_implementation_shows_its_bug_where_torch_does_not(name, monkeypatch):
    monkeypatch.setattr(logging, "raiseExceptions", False)  # torch 2.13's debug mode logs malformed records
    module = load(name)
    assert module.witness(module) != module.witness(torch.utils.checkpoint), f"{name}: {module.BREAKS}"
