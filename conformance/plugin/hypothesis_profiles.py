"""Hypothesis profiles for the property-based tests; pick one with ``--hypothesis-profile=NAME``.

They are registered under the project's own names, so that hypothesis's built-in ``ci`` profile (and
any other project's) is never replaced, and are registered and loaded only when the conformance
plugin configures a run (never at import):

- ``conformance-ci``: derandomized and bounded, so CI is reproducible and fits its time budget (the
  default). No example database: a run depends on nothing but the code, never on what an earlier run
  stored. Failures shrink, but are not "explained" (the slow coverage phase; use dev for that).
- ``conformance-dev``: random, a few more examples, for local work (failures are replayed from
  .hypothesis/);
- ``conformance-thorough``: many examples, for a release or a new implementation's first run.

The run's profile (``--hypothesis-profile``, else ``conformance-ci``) is loaded again after each file is
collected (this module's hook, registered by the plugin): collecting the sweeps imports
``torch.testing._internal.common_utils``, which registers and loads torch's own ``dev`` profile (10 examples,
the function-scoped fixture health check on; ``pytorch_ci`` where CI is set), and the property tests and the
results header must have the run's, whatever file was collected first.
"""

import pytest
from hypothesis import HealthCheck, Phase, settings

PREFIX = "conformance-"

# The tests take pytest's function-scoped `ckpt` fixture, which is safe to share between examples:
# it is an immutable binding of the implementation to a variant, and each example seeds its own RNG.
_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]

# Failures still shrink to a minimal example in CI, but skip the explain phase: its coverage tracing
# re-runs a failing test hundreds of times (~20 s per failing test), which the mutant meta-tests multiply.
_CI_PHASES = (Phase.explicit, Phase.generate, Phase.shrink)

PROFILES = {
    f"{PREFIX}ci": dict(max_examples=20, derandomize=True, database=None, deadline=None, print_blob=True,
                        phases=_CI_PHASES, suppress_health_check=_SUPPRESSED),
    f"{PREFIX}dev": dict(max_examples=30, deadline=None, print_blob=True, suppress_health_check=_SUPPRESSED),
    f"{PREFIX}thorough": dict(max_examples=300, deadline=None, print_blob=True, suppress_health_check=_SUPPRESSED),
}
DEFAULT_PROFILE = f"{PREFIX}ci"


def register_profiles() -> None:
    # Derive from hypothesis's pristine "default" profile: with CI=true in the environment, hypothesis
    # loads its own "ci" profile first, and profiles would otherwise inherit its derandomize=True.
    for name, options in PROFILES.items():
        settings.register_profile(name, parent=settings.get_profile("default"), **options)


def load_default_profile() -> None:
    settings.load_profile(DEFAULT_PROFILE)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """After each file (each collector) is collected, the run's profile is in force again: a test module
    imported next captures it (``@given`` takes ``settings.default`` when it decorates), and so do the
    results header and the run's plan."""
    try:
        return (yield)
    finally:
        wanted = collector.config.getoption("hypothesis_profile", None) or DEFAULT_PROFILE
        if settings.get_current_profile_name() != wanted:
            settings.load_profile(wanted)
