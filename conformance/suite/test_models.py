"""The models area: the implementation under test inside real model families from transformers (and peft
LoRA adapters on them), reached through transformers' own gradient-checkpointing hook.

transformers checkpoints every ``GradientCheckpointingLayer`` as
``self._gradient_checkpointing_func(partial(forward, self, **kwargs), *args)``, where the function is set
by ``model._set_gradient_checkpointing(enable=True, gradient_checkpointing_func=...)``; its public entry,
``activation_checkpointing_enable(activation_checkpointing_kwargs)`` (``gradient_checkpointing_enable``
before 5.x), calls it with ``functools.partial(torch.utils.checkpoint.checkpoint, **kwargs)``. The area
hands it the implementation bound to the test's variant instead (docs/AUTHORING.md, section 7), so the
region is exactly what the library checkpoints: hidden states as the positional argument, masks,
position embeddings and biases bound as keywords, tuple outputs, dropout inside.

Checked, against the un-checkpointed run of an equal model on the same inputs from the same seed, every
dropout on, in float64 (conformance/fixtures/model_families.py): the loss and every parameter's gradient (rng.*), the
number of times each block runs (recompute.*), the tensors handed to each region and to the model
(inputs.*), and, with LoRA adapters over frozen weights and frozen embeddings, what each variant's
contract says of regions whose inputs do not require grad (reqgrad.*), with and without peft's input-grad
switch. Gradients are compared with torch.testing's float64 tolerance (rtol 1e-7, atol 1e-7), not
bitwise: a tensor several regions use (tied embeddings, T5's position bias) sums its gradient
contributions in another order under checkpointing.

Without transformers (or peft, for the LoRA tests) the area skips, saying so. Nothing is downloaded.
"""

import contextlib
import os
import warnings

os.environ["HF_HUB_OFFLINE"] = "1"  # models are built from configs; never reach the hub
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import pytest  # noqa: E402
import torch  # noqa: E402
from torch.utils._pytree import tree_flatten  # noqa: E402

try:
    import transformers  # noqa: F401
except ImportError as exc:  # absent, or not importable with this torch: the area cannot run
    pytest.skip(f"the models area needs transformers (requirements/models.txt): {exc}", allow_module_level=True)
if int(transformers.__version__.split(".")[0]) < 5:  # its families and hook are transformers 5's (model_families.py)
    pytest.skip(f"the models area is written for transformers 5 (requirements/models.txt), found {transformers.__version__} "
                "(an implementation's own pin, e.g. colossalai's)", allow_module_level=True)

from conformance.testing import draws  # noqa: E402
from conformance.data.causes import DifferenceFound  # noqa: E402
from conformance.fixtures import model_families  # noqa: E402
from conformance.fixtures.model_families import build, checkpointed_layers, inputs  # noqa: E402
from conformance.fixtures.sweeps import same_values  # noqa: E402
from conformance.suite.sweep_checks import checked, running_test  # noqa: E402,F401  (running_test: autouse)
from conformance.suite.test_inputs import assert_unchanged, snapshot  # noqa: E402

# transformers imports each family's modeling code lazily, seconds each on a loaded machine: at collection,
# so that no test pays for it within a runner's per-test time limit.
for _family in model_families.FAMILIES:
    model_families.classes(_family)
with contextlib.suppress(ImportError):
    import peft  # noqa: F401

# transformers' and the models' own warnings (deprecations, config notes) are no part of what is checked. Each
# test runs a whole model family, forward and backward, often twice: seconds at idle, and more for a compiled row,
# which traces every block (docs/MEASUREMENTS.md), so the runner gives them its --slow-timeout.
pytestmark = [pytest.mark.filterwarnings("ignore"), pytest.mark.slow]

SEED = 0  # the global RNG's seed for every forward: dropout masks and router jitter are drawn from it


def pytest_generate_tests(metafunc):
    # Every family in every profile: the whole area fits the default suite's time budget (docs/MEASUREMENTS.md).
    if "family" in metafunc.fixturenames:
        metafunc.parametrize("family", model_families.FAMILIES, ids=[f.name for f in model_families.FAMILIES])


def enable_checkpointing(model, function):
    """transformers' own hook: every checkpointed block calls ``function(partial(forward, block, **kwargs), *args)``."""
    model._set_gradient_checkpointing(enable=True, gradient_checkpointing_func=function)


def run(model, family, *, seed=SEED):
    """Forward and backward from a fixed seed; the loss, then the global RNG's next draw."""
    torch.default_generator.manual_seed(seed)
    loss = family.loss(model(**inputs(family)))
    if loss.requires_grad:
        loss.backward()
    return loss.detach(), torch.rand(4, dtype=torch.float64)


def named_grads(model, trainable_only=False):
    return {name: p.grad for name, p in model.named_parameters() if p.requires_grad or not trainable_only}


def same_loss(actual, expected):
    try:
        same_values([actual], [expected])
    except AssertionError as exc:
        raise DifferenceFound("result", f"the loss: {exc}") from None


def same_grads(actual, expected):
    assert list(actual) == list(expected)
    for name in expected:
        try:
            same_values([actual[name]], [expected[name]])
        except AssertionError as exc:
            raise DifferenceFound("gradients", f"gradient of {name}: {exc}") from None


_PLAIN = {}  # (family name, draws fixed) -> (loss, next draw, gradients) of the un-checkpointed run, shared by the variants


def plain_run(family):
    key = family.name, draws.active()  # a re-run with fixed draws (conformance/plugin/rerun.py) compares with its own
    if key not in _PLAIN:
        model = build(family)
        loss, draw = run(model, family)
        _PLAIN[key] = loss, draw, named_grads(model)
    return _PLAIN[key]


@pytest.mark.clause("rng.same-forward", "rng.same-gradients", "rng.stream-restored")
def test_model_matches_uncheckpointed_run(ckpt, variant, family):
    expected_loss, expected_draw, expected_grads = plain_run(family)
    model = build(family)
    enable_checkpointing(model, ckpt.checkpoint)
    torch.default_generator.manual_seed(SEED)
    with checked("rng.same-forward", family, variant):
        loss = family.loss(model(**inputs(family)))
        same_values([loss.detach()], [expected_loss])
    with checked("rng.same-gradients", family, variant):
        loss.backward()
        same_grads(named_grads(model), expected_grads)
    with checked("rng.stream-restored", family, variant):
        assert torch.equal(torch.rand(4, dtype=torch.float64), expected_draw), "the RNG stream after backward differs"


class Counter:
    """Counts the calls of one module inside each checkpointed block (its first module with parameters):
    a forward hook inside the region runs in the forward and again in each recompute."""

    def __init__(self, model):
        self.calls = {}
        for index, layer in enumerate(checkpointed_layers(model)):
            probe = next(m for m in layer.modules() if m is not layer and any(True for _ in m.parameters(recurse=False)))
            self.calls[index] = 0
            probe.register_forward_pre_hook(lambda *_, index=index: self.calls.__setitem__(index, self.calls[index] + 1))

    def counts(self):
        return dict(self.calls)


@pytest.mark.clause("recompute.once-per-backward")
def test_model_recomputes_each_block_once(ckpt, variant, family):
    plain = build(family)
    plain_counter = Counter(plain)
    run(plain, family)
    once = plain_counter.counts()  # the probe's calls per block in one un-checkpointed forward
    model = build(family)
    enable_checkpointing(model, ckpt.checkpoint)
    counter = Counter(model)
    torch.default_generator.manual_seed(SEED)
    loss = family.loss(model(**inputs(family)))
    assert counter.counts() == once, f"calls per block in the forward {counter.counts()}, without checkpoint {once}"
    loss.backward()
    twice = {index: 2 * calls for index, calls in once.items()}
    assert counter.counts() == twice, (f"calls per block after one backward {counter.counts()}, expected {twice} "
                                       "(the forward plus one recompute of each block)")


class Watched:
    """A gradient-checkpointing function that snapshots every tensor handed to the region (the positional
    arguments and the keywords transformers binds into its partial), then calls the implementation."""

    def __init__(self, checkpoint):
        self.checkpoint, self.tensors, self.snapshots, self.regions = checkpoint, {}, {}, 0

    def __call__(self, function, *args, **kwargs):
        handed = {f"argument {i}": a for i, a in enumerate(args)}
        handed.update({f"keyword {k!r}": v for k, v in getattr(function, "keywords", {}).items()})
        tensors = {f"region {self.regions}, {name}" + (f" item {i}" if i else ""): t  # tuples: position embeddings
                   for name, value in handed.items() for i, t in enumerate(tree_flatten(value)[0])
                   if isinstance(t, torch.Tensor)}
        self.regions += 1
        snapshots = {name: snapshot(t) for name, t in tensors.items()}
        out = self.checkpoint(function, *args, **kwargs)
        assert_unchanged(tensors, snapshots, "by the checkpointed forward of its block")
        self.tensors.update(tensors)
        self.snapshots.update(snapshots)
        return out


@pytest.mark.clause("inputs.unchanged")
def test_model_leaves_the_tensors_it_hands_each_block_unchanged(ckpt, family):
    model = build(family)
    watched = Watched(ckpt.checkpoint)
    enable_checkpointing(model, watched)
    model_inputs = inputs(family)
    given = {f"model input {k!r}": v for k, v in model_inputs.items() if isinstance(v, torch.Tensor)}
    given_snapshots = {name: snapshot(t) for name, t in given.items()}
    torch.default_generator.manual_seed(SEED)
    loss = family.loss(model(**model_inputs))
    assert watched.regions, "no block was checkpointed"
    assert_unchanged(given, given_snapshots, "by the checkpointed forward")
    loss.backward()
    assert_unchanged(watched.tensors, watched.snapshots, "by backward through the checkpoints")
    assert_unchanged(given, given_snapshots, "by backward through the checkpoints")


# ------------------------------------------------------------------------- LoRA adapters (peft)


def lora(family, seed=0):
    """The family's model under LoRA adapters on its attention projections (with their own dropout): base
    weights and embeddings frozen, as peft leaves them, so no block's input requires grad."""
    try:
        import peft
    except ImportError as exc:
        pytest.skip(f"the LoRA tests of the models area need peft (requirements/models.txt): {exc}")
    if not hasattr(peft.PeftModel, "prepare_model_for_gradient_checkpointing"):  # the input-grad switch
        pytest.skip(f"the LoRA tests of the models area need peft 0.21 (requirements/models.txt), found {peft.__version__}")
    config = peft.LoraConfig(r=4, lora_alpha=8, lora_dropout=model_families.DROPOUT,
                             target_modules=list(family.lora_targets))
    with model_families.seeded(seed):  # the adapters' initial weights (B is zero: start from a nonzero one)
        model = peft.get_peft_model(build(family, seed), config)
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                torch.nn.init.normal_(parameter, std=0.1)
    assert all("lora_" in name for name, p in model.named_parameters() if p.requires_grad)
    return model


def lora_run(family, checkpoint=None, input_grads=False):
    """The LoRA model's run (checkpointed with checkpoint, if given; peft's input-grad switch on if asked);
    its loss, the warnings emitted during the run (their messages, of any category: the docs name none), and
    the adapters' gradients."""
    model = lora(family)
    if input_grads:
        model.prepare_model_for_gradient_checkpointing(model.get_base_model())  # peft's switch: embeddings' output requires grad
    if checkpoint is not None:
        enable_checkpointing(model.get_base_model(), checkpoint)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loss, _ = run(model, family)
    return loss, {str(w.message) for w in caught}, named_grads(model, True)


@pytest.mark.clause("reqgrad.reentrant-warns")
def test_lora_reentrant_warns_when_no_block_input_requires_grad(ckpt, family):
    _, plain_warnings, _ = lora_run(family)
    _, warned, _ = lora_run(family, ckpt.checkpoint)
    assert warned - plain_warnings, ("no warning beyond the un-checkpointed run's, although no block's input "
                                     "requires grad (frozen embeddings under LoRA adapters)")


@pytest.mark.clause("reqgrad.reentrant-no-gradients")
def test_lora_reentrant_adapters_get_no_gradient_when_no_block_input_requires_grad(ckpt, family):
    _, _, grads = lora_run(family, ckpt.checkpoint)
    given = [name for name, grad in grads.items() if grad is not None]
    assert not given, f"adapters inside the checkpointed blocks received gradients: {given[:4]}"


@pytest.mark.clause("reqgrad.non-reentrant-gradients")
def test_lora_non_reentrant_adapters_get_uncheckpointed_gradients(ckpt, family):
    expected_loss, _, expected = lora_run(family)
    loss, _, grads = lora_run(family, ckpt.checkpoint)
    same_loss(loss, expected_loss)
    assert all(g is not None for g in expected.values())
    same_grads(grads, expected)


@pytest.mark.clause("rng.same-gradients")
def test_lora_with_peft_input_grads_gets_uncheckpointed_gradients(ckpt, family):
    # peft's switch makes the embeddings' output require grad: every block then has an input requiring
    # grad, so both variants must give the adapters the un-checkpointed gradients (dropout replayed).
    expected_loss, _, expected = lora_run(family, input_grads=True)
    loss, _, grads = lora_run(family, ckpt.checkpoint, input_grads=True)
    same_loss(loss, expected_loss)
    same_grads(grads, expected)
