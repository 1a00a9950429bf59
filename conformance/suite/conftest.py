"""Fixtures every conformance test uses. ``variant`` and ``device`` are parametrized by the plugin."""

import pytest
import torch

from conformance.binding import Checkpointer
from conformance.breakage import (  # noqa: F401  (hooks: row-level known breakage)
    pytest_runtest_makereport,
    pytest_sessionfinish,
    pytest_terminal_summary,
)
from conformance.isolation import pytest_runtest_call  # noqa: F401  (a hook: leaked global state fails its test)
from conformance.plugin import implementation
from conformance.releases import pytest_runtest_setup  # noqa: F401  (a hook: clauses newer than the torch under test)


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
