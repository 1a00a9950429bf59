"""The oracle's process state (issue 35): every global setting torch's getters read, found by rule and read
after every step (a failed one too), each difference charged to the clause whose sentence speaks of it; and
warnings compared as the docs name them: any Warning, whatever its category."""

import itertools
import random
import types
import warnings

import pytest
import torch
import torch.utils.checkpoint as torch_checkpoint

from conformance import oracle
from conformance.oracle import compare, observe, prelude
from conformance.oracle.program import Program, runnable
from conformance.oracle.script import reproducer
from tests.correct import restores_python_generators
from tests.mutants.exceptions import flips_autocast_cache
from tests.integration.test_oracle_reproducer import _run

MUTANT = "tests.mutants.exceptions.flips_autocast_cache"


@pytest.fixture
def autocast_cache_kept():
    """The mutant flips torch's autocast cache switch for good: set it back after the test."""
    enabled = torch.is_autocast_cache_enabled()
    yield
    torch.set_autocast_cache_enabled(enabled)


def test_the_settings_are_torchs_getters_found_by_rule():
    names = observe.settings()
    for setting in ("torch.get_num_threads", "torch.are_deterministic_algorithms_enabled", "torch.is_grad_enabled",
                    "torch.is_autocast_cache_enabled", "torch.get_default_device", "torch.autograd.is_view_replay_enabled",
                    "torch.backends.cudnn.benchmark", "torch.backends.mkldnn.enabled",
                    "torch._C._get_cublas_allow_tf32",  # torch.backends.cuda.matmul.allow_tf32, reachable only there
                    "autocast (cpu)", "autocast (cuda)", "python random", "numpy random", "checkpoint switches"):
        assert setting in names, f"{setting} is not read"
    # getters that take an argument, warn (deprecated aliases), return what is no plain value, or are denied
    for other in ("torch.is_tensor", "torch.get_device", "torch.get_autocast_cpu_dtype", "torch.get_device_module",
                  "torch.get_rng_state", *observe.NOT_SETTINGS):
        assert other not in names, f"{other} is read as a setting"
    assert observe.settings() is names, "derived more than once: the plain and the checkpointed run could differ"


def test_a_counter_and_a_getter_that_changes_another_are_not_settings():
    box = [0]

    def meddler():
        box[0] += 1
        return True

    getters = {"counter": itertools.count().__next__, "steady": lambda: 1, "meddler": meddler, "victim": lambda: box[0]}
    assert set(observe._stable(getters)) == {"steady", "victim"}


def test_a_slow_getter_is_not_a_setting(monkeypatch):
    monkeypatch.setattr(observe, "_SLOW_S", -1.0)  # every read takes longer than that
    assert observe._stable({"steady": lambda: 1}) == {}


def test_a_derived_setting_left_changed_is_charged_to_no_leftover_state(autocast_cache_kept):
    program = Program("non_reentrant")
    found = oracle.violations(program, flips_autocast_cache)
    assert {(v.difference.observable, v.clause) for v in found} == {("state", "exceptions.no-leftover-state")}
    assert all("torch.is_autocast_cache_enabled" in v.difference.detail for v in found if v.difference.step == 0)
    assert not oracle.violations(program, torch_checkpoint)


def _advancing_python_random():
    """A checkpoint that draws from Python's global generator on every call."""
    def checkpoint(function, *args, **kwargs):
        random.random()
        return torch_checkpoint.checkpoint(function, *args, **kwargs)
    return types.SimpleNamespace(checkpoint=checkpoint, checkpoint_sequential=torch_checkpoint.checkpoint_sequential)


@pytest.mark.parametrize("raises", ["", "forward"])
def test_pythons_generator_left_advanced_is_found_after_every_step_a_failed_one_too(raises):
    found = oracle.violations(Program("reentrant", raises=raises), _advancing_python_random())
    assert found and all((v.difference.observable, v.clause) == ("state", "exceptions.no-leftover-state") for v in found)
    assert found[0].difference.step == 0 and "python random" in found[0].difference.detail


REGION_DRAWING_FROM_PYTHON = """
def run(api, record):
    random.seed(0)
    torch.manual_seed(0)
    x = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    record.watch(x=x)
    out = record('forward', lambda: api.checkpoint(lambda h: (h * random.random()).sin(), x, use_reentrant={reentrant}))
    record('backward', lambda: out.sum().backward(), backward=True)
    record('draw from Python', lambda: random.random())
"""


@pytest.mark.parametrize("reentrant", [True, False])
def test_restoring_more_than_torch_is_the_plain_run(reentrant):
    """A region that draws from Python's generator: torch's recompute draws again and leaves it advanced (the
    docs allow it, and the oracle's regions never draw from it); an implementation that replays and restores
    it, as torch does its own RNG, shows no difference at all."""
    run = runnable(REGION_DRAWING_FROM_PYTHON.format(reentrant=reentrant))
    plain = observe.observe(run, prelude.PLAIN)
    assert compare.compare(observe.observe(run, restores_python_generators), plain) == []
    torchs = compare.compare(observe.observe(run, torch_checkpoint), plain)
    assert any(d.observable == "state" and "python random" in d.detail for d in torchs)


WATCHED_GENERATOR = """
def run(api, record):
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    record.watch(x=x, generator=generator)
    out = record('forward', lambda: api.checkpoint(lambda h: (h * torch.rand(h.shape, generator=generator, dtype=h.dtype)).sin(), x, use_reentrant=False))
    record('backward', lambda: out.sum().backward(), backward=True)
"""


def test_a_generator_the_program_watches_is_an_rng_stream():
    """torch replays only its default generators: a generator of the program's own that the region draws from is
    drawn from again by the recompute."""
    run = runnable(WATCHED_GENERATOR)
    found = compare.compare(observe.observe(run, torch_checkpoint), observe.observe(run, prelude.PLAIN))
    assert [d.step for d in found if d.observable == "rng" and "generator generator" in d.detail] == [1]


def _warned(category, text):
    return warnings.WarningMessage(text, category, "region.py", 1)


def test_warnings_compare_whatever_their_category():
    assert observe._warning(_warned(UserWarning, "no input requires grad")) == observe._warning(
        _warned(RuntimeWarning, "none of the inputs needs a gradient"))
    assert observe._warning(_warned(UserWarning, "pass use_reentrant")) != observe._warning(_warned(UserWarning, "other"))


def test_the_reproducer_of_a_state_left_behind_needs_torch_and_the_implementation_only(tmp_path, autocast_cache_kept):
    program = Program("non_reentrant")
    script = tmp_path / "reproducer.py"
    script.write_text(reproducer(program, MUTANT, [v.observed for v in oracle.violations(program, flips_autocast_cache)]))
    on_mutant, on_torch = _run(script, MUTANT), _run(script, "torch.utils.checkpoint")
    assert on_mutant.returncode == 1 and "torch.is_autocast_cache_enabled" in on_mutant.stdout, on_mutant.stdout + on_mutant.stderr
    assert on_torch.returncode == 0, on_torch.stdout + on_torch.stderr
