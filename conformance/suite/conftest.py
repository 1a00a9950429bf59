"""Fixtures every conformance test uses (fixtures only: the plugin registers the harness's hooks).
``variant`` and ``device`` are parametrized by the plugin."""

import re
from pathlib import Path

import pytest
import torch

from conformance import facts
from conformance.binding import Checkpointer
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
def reproducer(request, tmp_path):
    """``reproducer(source) -> Path``: write a standalone Python script that reproduces this test's failure and
    name it in the test's record (docs/AUTHORING.md): beside the results file, in ``<results>-reproducers/``
    (without --results, in the test's temporary folder). Call it only when the test is about to fail."""

    def write(source: str) -> Path:
        results = request.config.getoption("results")
        folder = Path(results).with_name(Path(results).stem + "-reproducers") if results else tmp_path
        folder.mkdir(parents=True, exist_ok=True)
        script = folder / (re.sub(r"[^A-Za-z0-9._-]+", "_", request.node.name).strip("_") + ".py")
        script.write_text(source, encoding="utf-8")
        facts.set_reproducer(request.node, script.relative_to(Path(results).parent).as_posix() if results else str(script))
        return script

    return write
