"""The hypothesis profiles the property tests run under (conformance/plugin/hypothesis_profiles.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from conformance.plugin.hypothesis_profiles import DEFAULT_PROFILE, PROFILES, register_profiles

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def registered():
    register_profiles()


@pytest.mark.parametrize("name", ["conformance-ci", "conformance-dev", "conformance-thorough"])
def test_profile_is_registered(name):
    profile = settings.get_profile(name)
    assert profile.deadline is None, "tiny torch models still vary in speed on shared machines"
    assert HealthCheck.function_scoped_fixture in profile.suppress_health_check, "the tests take the `ckpt` fixture"


def test_ci_profile_is_reproducible_and_bounded():
    ci = settings.get_profile("conformance-ci")
    assert ci.derandomize, "CI must test the same examples on every run"
    assert ci.database is None, "a stored failure from an earlier run must not change what CI tests"
    assert ci.max_examples <= 25, "the ci profile is sized for the property tests to take ~10 s"


def test_ci_is_the_default_and_thorough_runs_most():
    assert DEFAULT_PROFILE == "conformance-ci"
    examples = [PROFILES[f"conformance-{name}"]["max_examples"] for name in ("ci", "dev", "thorough")]
    assert examples == sorted(examples) and len(set(examples)) == 3


@pytest.mark.parametrize("option, expected", [([], "conformance-ci"),
                                              (["--hypothesis-profile=conformance-thorough"], "conformance-thorough")])
def test_profile_is_selectable_on_the_command_line(option, expected, tmp_path):
    """The conformance plugin loads conformance-ci; --hypothesis-profile=NAME overrides it."""
    wanted = PROFILES[expected]
    (tmp_path / "test_profile.py").write_text(
        "from hypothesis import settings\n"
        "def test_active_profile():\n"
        f"    assert settings.default.max_examples == {wanted['max_examples']}\n"
        f"    assert settings.default.derandomize is {wanted.get('derandomize', False)}\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conformance.plugin", *option,
         str(tmp_path / "test_profile.py")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_runs_profile_is_in_force_and_recorded_whatever_file_is_collected_first(tmp_path):
    """Issue 34: collecting a sweep module imports torch.testing._internal.common_utils, which loads torch's own
    `dev` profile (10 examples, the function-scoped fixture health check on); a property test module collected
    after it took that profile, and every property test failed its health check on the reference."""
    results = tmp_path / "results.json"
    suite = ROOT / "conformance" / "suite"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--impl=reference_impl", "--variant=reentrant",
         "-k", "test_forward_value_equals_the_functions or test_gradients_equal_the_uncheckpointed_run",
         f"--results={results}", str(suite / "test_sweep_ops.py"), str(suite / "test_properties.py")],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    recorded = json.loads(results.read_text())["header"]["hypothesis"]
    assert (recorded["profile"], recorded["max_examples"]) == (DEFAULT_PROFILE, PROFILES[DEFAULT_PROFILE]["max_examples"])
