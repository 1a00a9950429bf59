"""Installing the harness changes no other project's pytest run: no option is added, no hypothesis
profile is loaded or replaced. The suite itself still runs from anywhere, asked for explicitly."""

import json
import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# An unrelated project: its own --device option, and a property test that reports the hypothesis
# settings it runs under.
UNRELATED_CONFTEST = """
def pytest_addoption(parser):
    parser.addoption("--device", default="npu", help="this project's own option")
"""
UNRELATED_TEST = """
import json, os
from hypothesis import settings

def test_runs_under_its_own_settings(pytestconfig):
    assert pytestconfig.getoption("device") == "npu"
    current = settings()
    with open(os.environ["SETTINGS_OUT"], "w") as f:
        json.dump({"profile": settings.get_current_profile_name(), "max_examples": current.max_examples,
                   "derandomize": current.derandomize, "database": current.database is not None}, f)
"""
HYPOTHESIS_DEFAULTS = """
import json
from hypothesis import settings
current = settings()
print(json.dumps({"profile": settings.get_current_profile_name(), "max_examples": current.max_examples,
                  "derandomize": current.derandomize, "database": current.database is not None}))
"""


def _environment(tmp_path):
    # The harness importable as if installed (in a tox env it is installed; in a checkout, PYTHONPATH).
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
            "SETTINGS_OUT": str(tmp_path / "settings.json")}


def test_the_harness_registers_no_pytest_entry_point():
    ours = [ep for ep in metadata.entry_points(group="pytest11")
            if ep.value.split(".")[0] in ("conformance", "fixtures", "reference_impl")]
    assert not ours, f"an entry point loads the harness into every pytest run in this environment: {ours}"


def test_an_unrelated_project_keeps_its_options_and_hypothesis_settings(tmp_path):
    project = tmp_path / "unrelated"
    project.mkdir()
    (project / "conftest.py").write_text(textwrap.dedent(UNRELATED_CONFTEST))
    (project / "test_unrelated.py").write_text(textwrap.dedent(UNRELATED_TEST))
    env = _environment(tmp_path)
    expected = json.loads(subprocess.run([sys.executable, "-c", HYPOTHESIS_DEFAULTS], env=env, cwd=project,
                                         capture_output=True, text=True, check=True, timeout=120).stdout)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--device=npu"],
                            env=env, cwd=project, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    seen = json.loads((tmp_path / "settings.json").read_text())
    assert seen == expected, "the hypothesis settings of an unrelated project changed"
    assert not seen["profile"].startswith("conformance")


def test_the_installed_suite_runs_from_anywhere_when_asked_for(tmp_path):
    """The documented way (docs/IMPLEMENTING.md) to run the installed suite outside a checkout."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conformance.plugin", "--pyargs", "conformance.suite",
         "--impl=torch.utils.checkpoint", "--clause=api", "-q", "-p", "no:cacheprovider"],
        env=_environment(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " passed" in result.stdout


def test_the_distribution_claims_no_top_level_fixtures_package():
    """`fixtures` is a popular PyPI package: the harness ships its fixtures as conformance.fixtures."""
    try:
        files = metadata.distribution("checkpoint-conformance").files or []
    except metadata.PackageNotFoundError:
        import pytest

        pytest.skip("the harness is not installed in this environment (tox -e selftest installs it)")
    if '"editable": true' in (metadata.distribution("checkpoint-conformance").read_text("direct_url.json") or ""):
        import pytest

        pytest.skip("the harness is installed in editable mode (pip install -e .), which lists a path hook, not the "
                    "packages a built distribution holds (tox -e selftest installs it built)")
    top_level = {f.parts[0] for f in files if f.suffix == ".py"}
    assert "fixtures" not in top_level and "conformance" in top_level, sorted(top_level)


def test_a_property_tests_printed_reproducer_runs_with_the_installed_harness(tmp_path):
    """The one-liner a falsifying example prints imports only what an installed harness has (no
    top-level ``fixtures``): run from outside the checkout, with nothing of the checkout on the path."""
    from conformance.plugin.binding import Checkpointer, load_implementation
    from conformance.fixtures.strategies import Case, InputSpec, Leaf, ModelSpec
    from conformance.suite.test_properties import check_gradients, reproducer_code

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = subprocess.run([sys.executable, "-c", "import conformance"], env=env, cwd=tmp_path, capture_output=True)
    if probe.returncode != 0:
        import pytest

        pytest.skip("the harness is not installed in this environment (tox -e selftest installs it)")
    case = Case(model=ModelSpec(depth=1, width=5, dropout=0.25, activation="gelu", seed=0),
                inputs=InputSpec(args=(Leaf(shape="batch", grad=True),), kwargs={}, batch=1, seed=0))
    code = reproducer_code(Checkpointer(load_implementation("torch.utils.checkpoint"), "non_reentrant"),
                           check_gradients, case)
    result = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0 and "check_gradients passed" in result.stdout, result.stdout + result.stderr
