"""The pytest plugin, the one way in: options, the implementation under test, clause checks, each test's facts,
its hook modules, summary.

It is loaded only where the conformance suite runs, never into other projects: by ``-p
conformance.plugin`` in this repository's pytest configuration (pyproject.toml), and explicitly for
an installed harness (``pytest -p conformance.plugin --pyargs conformance.suite --impl=...``). There is
deliberately no ``pytest11`` entry point: installed, it would add ``--device`` and friends to every
pytest run in the environment. Importing it changes nothing; the hypothesis profiles are registered,
and the default one loaded, when pytest configures a run with it.

It registers every other hook of the harness itself, when pytest configures a run: the hook modules
(:data:`HOOK_MODULES`), the judge (conformance/plugin/judging.py), the recorder (conformance/plugin/recording.py:
the session's records, and with ``--results`` their file) and the judgement of stale declarations over them
(conformance/plugin/staleness.py). ``conformance/suite/conftest.py`` holds fixtures only.
"""

from __future__ import annotations

from pathlib import Path

import hypothesis.configuration
import pytest

from conformance.data import facts, registry
from conformance.plugin import (binding, failure_summary, hypothesis_profiles, isolation, modules_not_run, not_binding,
                                options, rerun, since_release, staleness)
from conformance.data.datafiles import DataFileError
from conformance.data.expectations import EXPECTATIONS_PATH, Expectations
from conformance.data.facts import clause_ids_of, item_param
from conformance.plugin.judging import Judge
from conformance.plugin.recording import Recorder, environment
from conformance.plugin.staleness import Staleness
from conformance.data.ids import SUITE_DIR
from conformance.data.vocabulary import OUTPUT_DIR, VARIANTS

IMPLEMENTATION = pytest.StashKey["binding.Implementation"]()
UNTESTED = pytest.StashKey[list]()  # the clauses the run selected that got no test
JUDGE = pytest.StashKey[Judge]()
EXPECTATIONS = pytest.StashKey[Expectations]()
HOOK_MODULES = (not_binding, isolation, since_release, hypothesis_profiles, failure_summary, modules_not_run, rerun)  # registered by this plugin, and nowhere else


def pytest_addoption(parser):
    group = parser.getgroup("conformance", "activation-checkpointing conformance")
    options.declare(group.addoption)
    group.addoption("--results", metavar="PATH", default=None,
                    help="write machine-readable JSON results here (and a .jsonl stream beside it)")
    group.addoption("--expectations", metavar="PATH", default=str(EXPECTATIONS_PATH),
                    help="the declared known deviations (default: the harness's expectations.toml)")
    group.addoption("--conformance-plan", metavar="PATH", default=None,
                    help="(used by `python -m conformance run`) write the collected tests and the header here as JSON")
    group.addoption("--conformance-reproducers", metavar="DIR", default=None,
                    help="(used by `python -m conformance run`) write the reproducer scripts into DIR, the folder beside "
                    "the run's results file (default: RESULTS-reproducers/ beside --results, else reports/reproducers/IMPL/)")


@pytest.hookimpl(tryfirst=True)  # before hypothesis's plugin loads the --hypothesis-profile it was given
def pytest_configure(config):
    config.addinivalue_line("markers", "clause(*ids): the specification clause(s) a conformance test checks")
    config.addinivalue_line("markers", "slow: takes seconds, not milliseconds (multi-process, a whole model): "
                            "`python -m conformance run` gives it --slow-timeout")
    _one_output_folder(config)
    hypothesis_profiles.register_profiles()
    if config.getoption("hypothesis_profile", None) is None:  # an explicit --hypothesis-profile wins
        hypothesis_profiles.load_default_profile()
    try:
        registry.load_clauses()
    except DataFileError as exc:
        raise pytest.UsageError(str(exc)) from None
    unknown = registry.unknown_ids(config.getoption("clause"))
    if unknown:
        raise pytest.UsageError(f"--clause: unknown clause or area id(s): {'; '.join(unknown)}")
    if config.getoption("impl") is not None:
        implementation(config)  # fail fast on a bad --impl or expectations file, before collection
        _expectations(config)
    for module in HOOK_MODULES:
        config.pluginmanager.register(module, f"conformance-{module.__name__.rsplit('.', 1)[-1]}")
    config.stash[JUDGE] = Judge(config, lambda: implementation(config), lambda: _expectations(config))
    config.pluginmanager.register(config.stash[JUDGE], "conformance-judge")
    if not hasattr(config, "workerinput"):  # xdist: the controller, which receives every worker's reports
        recorder = Recorder(config, config.getoption("results"), header=lambda: header(config))
        config.pluginmanager.register(recorder, "conformance-recorder")
        config.pluginmanager.register(Staleness(config, lambda: list(recorder.records.values()),
                                                impl=lambda: implementation(config).id, load=lambda: _expectations(config)),
                                      staleness.NAME)


def _one_output_folder(config) -> None:
    """What the run writes goes into OUTPUT_DIR where pytest was invoked (README), wherever that is (a user's own
    project, from an installed harness): hypothesis's home (its cache of constants, the dev profile's examples), and
    pytest's cache unless -o names one. pytest has no public way to move its cache from a plugin:
    this seeds the value its configuration lookup caches, before its cache provider (tryfirst too, registered
    earlier, so called later) reads it."""
    out = config.invocation_params.dir / OUTPUT_DIR
    hypothesis.configuration.set_hypothesis_home_dir(out / ".hypothesis")
    if not any("cache_dir" in o for o in config.getoption("override_ini") or ()):
        config._inicache["cache_dir"] = str(out / ".pytest_cache")


def implementation(config) -> binding.Implementation:
    """The implementation under test (loaded once; a bad --impl becomes a one-line usage error)."""
    if IMPLEMENTATION not in config.stash:
        try:
            config.stash[IMPLEMENTATION] = binding.load_implementation(config.getoption("impl") or binding.DEFAULT_IMPL)
        except binding.BindingError as exc:
            raise pytest.UsageError(str(exc)) from None
    return config.stash[IMPLEMENTATION]


def _expectations(config) -> Expectations:
    """The declarations the run is judged by (loaded once; a bad file becomes a one-line usage error)."""
    if EXPECTATIONS not in config.stash:
        try:
            config.stash[EXPECTATIONS] = Expectations.load(Path(config.getoption("expectations")))
        except (OSError, ValueError, TypeError) as exc:
            raise pytest.UsageError(f"--expectations: {exc}") from None
    return config.stash[EXPECTATIONS]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """What the implementation noted while the test ran goes with the test's result."""
    if facts.read(item) is None:  # not a conformance test
        return (yield)
    impl = implementation(item.config)
    impl.take_notes()  # what was noted before the call (an earlier test, a fixture) is not this test's
    try:
        return (yield)
    finally:
        facts.note(item, impl.take_notes())


def header(config) -> dict:
    """The results header of this run, less its times and exit status."""
    impl = implementation(config)
    return {
        "implementation": impl.id,
        "implementation_name": impl.name,
        "implementation_module": impl.module.__name__,
        "implementation_version": impl.version,
        "capabilities": impl.capabilities.to_json(),
        "strict_levels": config.getoption("strict_levels"),
        "modules_not_run": modules_not_run.recorded(),  # whole areas that skipped at collection, and why
        **environment(config),
    }


def _in_suite(path: Path) -> bool:
    return SUITE_DIR in Path(path).parents


def pytest_generate_tests(metafunc):
    ids = clause_ids_of(metafunc.definition)
    if not ids:
        if _in_suite(metafunc.definition.path):
            pytest.fail(f"{metafunc.definition.nodeid}: every conformance test needs @pytest.mark.clause(...)", pytrace=False)
        return
    clauses = registry.load_clauses()
    unknown = [i for i in ids if i not in clauses]
    if unknown:
        pytest.fail(f"{metafunc.definition.nodeid}: unknown clause id(s) {unknown} (see conformance/data/clauses.toml)", pytrace=False)
    config = metafunc.config
    if "variant" in metafunc.fixturenames:
        bound = [v for v in VARIANTS if all(v in clauses[i].variants for i in ids)]
        if not bound:
            pytest.fail(f"{metafunc.definition.nodeid}: clauses {ids} bind no common variant", pytrace=False)
        metafunc.parametrize("variant", bound)  # --variant deselects the others after collection
    if "device" in metafunc.fixturenames:
        wanted = options.devices(config.getoption("device"))
        metafunc.parametrize("device", [pytest.param(d, id=d, marks=_device_marks(d)) for d in wanted])


def _device_marks(device: str):
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            return [pytest.mark.skip(reason="CUDA is not available on this machine (torch.cuda.is_available() is False)")]
    return []


def pytest_collection_modifyitems(session, config, items):
    tested = {cid for item in items for cid in clause_ids_of(item)}
    if not tested:
        return
    config.stash[UNTESTED] = [cid for cid in _selected_clauses(config, items) if cid not in tested]
    _select(config, items)
    for item in items:
        if ids := clause_ids_of(item):
            config.stash[JUDGE].plan(item, ids, item_param(item, "variant"), item_param(item, "device") or "cpu")


def _selected_clauses(config, items) -> list[str]:
    """The clauses the run asks for: those --clause names (clause and area ids), else every clause when the
    run collected the whole suite, else none (a run of some test files or names asks for their tests only)."""
    asked = set(config.getoption("clause"))
    clauses = registry.load_clauses().values()
    if asked:
        return [c.id for c in clauses if c.id in asked or c.area in asked]
    whole_suite = set(SUITE_DIR.glob("test_*.py")) <= {Path(item.path) for item in items}
    narrowed = config.getoption("keyword") or config.getoption("markexpr")
    return [c.id for c in clauses] if whole_suite and not narrowed else []


def _select(config, items):
    """Deselect the tests --clause and --variant leave out (a run binds only what it asks for)."""
    clauses = set(config.getoption("clause"))
    clauses |= {c.id for c in registry.load_clauses().values() if c.area in clauses}
    variant = config.getoption("variant")

    def wanted(item):
        ids = clause_ids_of(item)
        if not ids:
            return True
        return (not clauses or bool(clauses & set(ids))) and variant in ("both", item_param(item, "variant"))

    keep = [item for item in items if wanted(item)]
    if len(keep) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if not wanted(item)])
        items[:] = keep


def pytest_report_header(config):
    if config.getoption("impl") is None and IMPLEMENTATION not in config.stash:
        return None
    impl = implementation(config)
    return f"conformance: {impl.id} ({impl.module.__name__} {impl.version}; capabilities {impl.capabilities.source}), variant={config.getoption('variant')}, device={'/'.join(options.devices(config.getoption('device')))}"


def pytest_terminal_summary(terminalreporter, config):
    untested = config.stash.get(UNTESTED, None)
    if untested:
        terminalreporter.section("clauses with no test")
        terminalreporter.line(", ".join(untested))
