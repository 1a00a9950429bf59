"""Hypothesis profiles for the property-based tests; pick one with ``--hypothesis-profile=NAME``.

- ``ci``: derandomized and bounded, so CI is reproducible and fits its time budget (the default).
  No example database: a run depends on nothing but the code, never on what an earlier run stored.
  Failures shrink, but are not "explained" (the slow coverage phase; use dev for that).
  All 22 property tests (conformance/suite/test_properties.py: one implementation, both variants)
  take about 6 s on the project's 2-core machine, ~1.5 s of which is torch's first-checkpoint warm-up;
- ``dev``: random, a few more examples, for local work (failures are replayed from .hypothesis/);
- ``thorough``: many examples, for a release or a new implementation's first run.
"""

from hypothesis import HealthCheck, Phase, settings

# The tests take pytest's function-scoped `ckpt` fixture, which is safe to share between examples:
# it is an immutable binding of the implementation to a variant, and each example seeds its own RNG.
_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]

# Failures still shrink to a minimal example in CI, but skip the explain phase: its coverage tracing
# re-runs a failing test hundreds of times (~20 s per failing test), which the mutant meta-tests multiply.
_CI_PHASES = (Phase.explicit, Phase.generate, Phase.shrink)

PROFILES = {
    "ci": dict(max_examples=20, derandomize=True, database=None, deadline=None, print_blob=True,
               phases=_CI_PHASES, suppress_health_check=_SUPPRESSED),
    "dev": dict(max_examples=30, deadline=None, print_blob=True, suppress_health_check=_SUPPRESSED),
    "thorough": dict(max_examples=300, deadline=None, print_blob=True, suppress_health_check=_SUPPRESSED),
}
DEFAULT_PROFILE = "ci"


def register_profiles() -> None:
    # Derive from hypothesis's pristine "default" profile: with CI=true in the environment, hypothesis
    # loads its own "ci" profile first, and profiles would otherwise inherit its derandomize=True.
    for name, options in PROFILES.items():
        settings.register_profile(name, parent=settings.get_profile("default"), **options)
    settings.load_profile(DEFAULT_PROFILE)  # --hypothesis-profile, read later by hypothesis's plugin, overrides
