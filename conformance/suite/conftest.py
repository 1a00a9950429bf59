"""Fixtures every conformance test uses (fixtures only: the plugin registers the harness's hooks).
``variant`` and ``device`` are parametrized by the plugin."""

from pathlib import Path

import pytest
import torch

from conformance.data import facts
from conformance.plugin import reproducers
from conformance.plugin.binding import Checkpointer
from conformance.plugin import implementation


@pytest.fixture(scope="session")
def impl(pytestconfig):
    return implementation(pytestconfig)


@pytest.fixture
def ckpt(impl, variant) -> Checkpointer:
    """The implementation under test bound to this test's variant (use_reentrant always explicit)."""
    return Checkpointer(impl, variant)


@pytest.fixture(autouse=True)
def isolated_global_state():
    """Each test starts from a known seed and grad mode, and may not leak global state to the next."""
    rng = torch.get_rng_state()
    torch.manual_seed(0)
    with torch.enable_grad():
        yield
    torch.set_rng_state(rng)


@pytest.fixture
def reproducer(request):
    """``reproducer(source) -> Path``: write a standalone Python script that reproduces this test's failure and
    name it in the test's record (docs/AUTHORING.md): beside the results file, in ``<results>-reproducers/``
    (without --results, in ``reports/reproducers/<implementation>/``; conformance/plugin/reproducers.py). Call it only
    when the test is about to fail."""

    def write(source: str) -> Path:
        config = request.config
        into = reproducers.folder(config.getoption("conformance_reproducers"), config.getoption("results"),
                                  implementation(config).id, config.invocation_params.dir)
        script, recorded = reproducers.write(into, request.node.name, source)
        facts.set_reproducer(request.node, recorded)
        return script

    return write
