"""Hypothesis profiles for the property-based tests; pick one with ``--hypothesis-profile=NAME``.

- ``ci``: derandomized and bounded, so CI is reproducible and fits its time budget (the default);
- ``dev``: random, a few more examples, for local work;
- ``thorough``: many examples, for a release or a new implementation's first run.
"""

from hypothesis import HealthCheck, settings

PROFILES = {
    "ci": dict(max_examples=15, derandomize=True, deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]),
    "dev": dict(max_examples=30, deadline=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]),
    "thorough": dict(max_examples=300, deadline=None, print_blob=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]),
}
DEFAULT_PROFILE = "ci"


def register_profiles() -> None:
    for name, options in PROFILES.items():
        settings.register_profile(name, **options)
    settings.load_profile(DEFAULT_PROFILE)  # --hypothesis-profile, read later by hypothesis's plugin, overrides
