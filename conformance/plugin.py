"""The pytest plugin: options, the implementation under test, clause checks, expectation marks, summary.

It is loaded only where the conformance suite runs, never into other projects: by ``-p
conformance.plugin`` in this repository's pytest configuration (pyproject.toml), and explicitly for
an installed harness (``pytest -p conformance.plugin --pyargs conformance.suite --impl=...``). There is
deliberately no ``pytest11`` entry point: installed, it would add ``--device`` and friends to every
pytest run in the environment. Importing it changes nothing; the hypothesis profiles are registered,
and the default one loaded, when pytest configures a run with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import binding, expectations, hypothesis_profiles, levels, registry, upstream
from conformance.recording import Recorder, clause_ids_of, item_param
from conformance.vocabulary import DEVICES, VARIANTS

SUITE_DIR = Path(__file__).with_name("suite")
IMPLEMENTATION = pytest.StashKey["binding.Implementation"]()
UNTESTED = pytest.StashKey[list]()


def pytest_addoption(parser):
    group = parser.getgroup("conformance", "activation-checkpointing conformance")
    group.addoption(
        "--impl",
        metavar="MODULE",
        default=None,
        help=f"implementation under test: an importable module exposing the torch.utils.checkpoint API, "
        f"or an adapter's short name (default: {binding.DEFAULT_IMPL})",
    )
    group.addoption("--variant", choices=(*VARIANTS, "both"), default="both",
                    help="which use_reentrant variant(s) to test (default: both)")
    group.addoption("--device", choices=(*DEVICES, "all"), default="all",
                    help="devices for device-parametrized tests; CUDA tests skip where CUDA is absent (default: all)")
    group.addoption("--clause", action="append", default=[], metavar="ID",
                    help="run only the tests of this clause id or area id (repeatable)")
    group.addoption("--results", metavar="PATH", default=None,
                    help="write machine-readable JSON results here (and a .jsonl stream beside it)")
    group.addoption("--expectations", metavar="PATH", default=str(expectations.EXPECTATIONS_PATH),
                    help="the declared known deviations (default: the harness's expectations.toml)")
    group.addoption("--strict-levels", action="store_true", default=False,
                    help="fail the run on failing tests of SHOULD, MAY and OBSERVED clauses too (by default only a "
                    "MUST binds: those read 'SHOULD unmet' / 'differs from torch' and leave the exit status alone)")


@pytest.hookimpl(tryfirst=True)  # before hypothesis's plugin loads the --hypothesis-profile it was given
def pytest_configure(config):
    config.addinivalue_line("markers", "clause(*ids): the specification clause(s) a conformance test checks")
    config.addinivalue_line("markers", "slow: takes seconds, not milliseconds (multi-process): `python -m conformance run` "
                            "gives it --slow-timeout")
    config.pluginmanager.register(levels, "conformance-levels")
    config.pluginmanager.register(upstream, "conformance-upstream")
    hypothesis_profiles.register_profiles()
    if config.getoption("hypothesis_profile", None) is None:  # an explicit --hypothesis-profile wins
        hypothesis_profiles.load_default_profile()
    try:
        clauses = registry.load_clauses()
    except registry.RegistryError as exc:
        raise pytest.UsageError(f"conformance/clauses.toml: {exc}") from None
    unknown = [c for c in config.getoption("clause") if c not in clauses and c not in registry.load_areas()]
    if unknown:
        raise pytest.UsageError(f"--clause: unknown clause or area id(s): {', '.join(unknown)}")
    if config.getoption("impl") is not None:
        implementation(config)  # fail fast on a bad --impl, before collection
    if config.getoption("results") and not hasattr(config, "workerinput"):  # xdist: controller only
        recorder = Recorder(config, config.getoption("results"), header_fields=lambda: _header_fields(config))
        config.pluginmanager.register(recorder, "conformance-recorder")


def implementation(config) -> binding.Implementation:
    """The implementation under test (loaded once; a bad --impl becomes a one-line usage error)."""
    if IMPLEMENTATION not in config.stash:
        try:
            config.stash[IMPLEMENTATION] = binding.load_implementation(config.getoption("impl") or binding.DEFAULT_IMPL)
        except binding.BindingError as exc:
            raise pytest.UsageError(str(exc)) from None
    return config.stash[IMPLEMENTATION]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """What the implementation noted while the test ran goes with the test's result."""
    impl = implementation(item.config)
    impl.take_notes()  # what was noted before the call (an earlier test, a fixture) is not this test's
    try:
        return (yield)
    finally:
        if notes := impl.take_notes():
            item.user_properties.append(("notes", notes))


def _header_fields(config) -> dict:
    impl = implementation(config)
    return {
        "implementation": impl.id,
        "implementation_name": impl.name,
        "implementation_module": impl.module.__name__,
        "implementation_version": impl.version,
        "capabilities": impl.capabilities.to_json(),
        "strict_levels": config.getoption("strict_levels"),
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
        pytest.fail(f"{metafunc.definition.nodeid}: unknown clause id(s) {unknown} (see conformance/clauses.toml)", pytrace=False)
    config = metafunc.config
    if "variant" in metafunc.fixturenames:
        bound = [v for v in VARIANTS if all(v in clauses[i].variants for i in ids)]
        if not bound:
            pytest.fail(f"{metafunc.definition.nodeid}: clauses {ids} bind no common variant", pytrace=False)
        metafunc.parametrize("variant", bound)  # --variant deselects the others after collection
    if "device" in metafunc.fixturenames:
        wanted = DEVICES if config.getoption("device") == "all" else (config.getoption("device"),)
        metafunc.parametrize("device", [pytest.param(d, id=d, marks=_device_marks(d)) for d in wanted])


def _device_marks(device: str):
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            return [pytest.mark.skip(reason="CUDA is not available on this machine (torch.cuda.is_available() is False)")]
    return []


def pytest_collection_modifyitems(session, config, items):
    conformance_items = [item for item in items if clause_ids_of(item)]
    if not conformance_items:
        return
    tested = {cid for item in conformance_items for cid in clause_ids_of(item)}
    config.stash[UNTESTED] = [cid for cid in registry.load_clauses() if cid not in tested]
    _select(config, items)
    impl = implementation(config)
    try:
        deviations = expectations.load_deviations(Path(config.getoption("expectations")))
        upstream.load(config)
    except (OSError, ValueError, TypeError) as exc:
        raise pytest.UsageError(f"--expectations: {exc}") from None
    clauses = registry.load_clauses()
    for item in items:
        ids = clause_ids_of(item)
        if ids:
            _mark_expected(item, ids, impl, deviations, clauses)


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


def _mark_expected(item, ids, impl, deviations, clauses):
    """Record what is expected of the test; a declared deviation becomes a strict xfail (the run
    fails if it stops happening), an unclaimed capability a non-strict one."""
    variant, device = item_param(item, "variant"), item_param(item, "device") or "cpu"
    expected = expectations.expected_for(impl=impl.id, capabilities=impl.capabilities, clause_ids=ids,
                                         variant=variant, device=device, nodeid=item.nodeid,
                                         deviations=deviations, clauses=clauses)
    item.user_properties += [("clauses", list(ids)), ("variant", variant), ("device", device),
                             ("expected", expected and {"kind": expected.kind, "reason": expected.reason})]
    if expected is not None:
        strict = expected.kind == "deviation"
        item.add_marker(pytest.mark.xfail(reason=f"{'expected deviation' if strict else 'unsupported'}: {expected.reason}",
                                          strict=strict))


def pytest_report_header(config):
    if config.getoption("impl") is None and IMPLEMENTATION not in config.stash:
        return None
    impl = implementation(config)
    return f"conformance: {impl.id} ({impl.module.__name__} {impl.version}; capabilities {impl.capabilities.source}), variant={config.getoption('variant')}, device={config.getoption('device')}"


def pytest_terminal_summary(terminalreporter, config):
    untested = config.stash.get(UNTESTED, None)
    if untested:
        terminalreporter.section("clauses with no test")
        terminalreporter.line(", ".join(untested))
