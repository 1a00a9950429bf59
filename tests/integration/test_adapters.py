"""Self-tests of the third-party adapters (conformance/adapters/).

The structural checks run everywhere: every adapter imports without its third-party package, declares
valid capabilities, and binds through ``--impl=<short name>``. The behavioural smoke checks run where
the package is installed (each third party lives in its own environment, see docs/THIRD_PARTY.md) and
skip with the reason elsewhere. The conformance suite itself (``pytest --impl=<adapter>``) is what
judges the implementations; these checks only guard the adapters' mapping.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import pkgutil
import subprocess
import sys
import warnings

import pytest
import torch
import torch.utils.checkpoint
from torch.utils._python_dispatch import TorchDispatchMode

import conformance.adapters
from conformance.adapters._support import FunctionModule, Unsupported
from conformance.data.causes import causes_of
from conformance.data.expectations import Expectations, explains
from conformance.data.vocabulary import release_of
from conformance.plugin import isolation
from conformance.plugin.binding import load_implementation

ADAPTERS = sorted(m.name for m in pkgutil.iter_modules(conformance.adapters.__path__) if not m.name.startswith("_"))

# adapter -> (top-level package it needs, the variant it lacks or None, always stashes RNG)
THIRD_PARTY = {
    "fairscale": ("fairscale", "non_reentrant", True),
    "deepspeed": ("deepspeed", None, True),
    "megatron": ("megatron.core", "non_reentrant", True),
    "megatron_cpu_patched": ("megatron.core", "non_reentrant", True),
    "torch_checkpoint_wrapper": ("torch.distributed", None, False),
    "torch_composable": ("torch.distributed", "reentrant", False),
    "torch_sac": ("torch", "reentrant", False),
    "torch_compile": ("torch", None, False),
    "torch_compile_fullgraph": ("torch", None, False),
    "torch_compile_inductor": ("torch", None, False),
    "deepspeed_partition": ("deepspeed", None, True),
    "deepspeed_cpu_checkpointing": ("deepspeed", None, True),
    "xformers": ("xformers", "reentrant", False),
    # issue 26, i26-rows-a: Unsloth's patches (use_reentrant is not refused: the patched checkpoint ignores it)
    "unsloth": ("unsloth_zoo", None, False),
    "unsloth_gradient_checkpoint": ("unsloth_zoo", None, False),
    "colossalai": ("colossalai", None, True),
    "colossalai_cpu_patched": ("colossalai", None, True),
    "returnn": ("returnn", "reentrant", True),
}
# Adapters that run torch's own checkpoint_sequential (compiled) and so claim it.
OWN_SEQUENTIAL = ("torch_compile", "torch_compile_fullgraph", "torch_compile_inductor", "unsloth", "unsloth_gradient_checkpoint")
# What a call in the variant an adapter lacks raises: torch's own APIs refuse it themselves.
MISSING_VARIANT_ERROR = {"torch_composable": NotImplementedError, "torch_sac": ValueError}
BLOCKED = ("fairscale", "deepspeed", "megatron", "xformers", "unsloth_zoo", "colossalai", "returnn")

# issue 26: torchgpipe's Checkpoint/Recompute pair (reentrant design, always stashes the CPU RNG state).
THIRD_PARTY["torchgpipe"] = ("torchgpipe", "non_reentrant", True)
BLOCKED += ("torchgpipe",)

# issue 26: Thunder's checkpoint lookaside inside thunder.jit; it traces torch's checkpoint_sequential too.
# Its refusal of use_reentrant=True is a TypeError: it hands its do_raise a str, not an exception.
THIRD_PARTY["thunder"] = ("thunder", "reentrant", False)
OWN_SEQUENTIAL += ("thunder",)
MISSING_VARIANT_ERROR["thunder"] = TypeError
BLOCKED += ("thunder",)

# issue 26: torch_xla's fork of the reentrant CheckpointFunction (torch 2.9.0 only); it refuses use_reentrant=False
# itself with a ValueError.
THIRD_PARTY["torch_xla"] = ("torch_xla", "non_reentrant", False)
MISSING_VARIANT_ERROR["torch_xla"] = ValueError
BLOCKED += ("torch_xla",)


def test_the_adapter_table_lists_every_adapter():
    assert sorted(THIRD_PARTY) == ADAPTERS


def test_adapters_import_without_their_third_party_packages():
    """A fresh interpreter where fairscale, deepspeed and megatron cannot be imported still imports
    every adapter, and none of them imports its package at module load."""
    code = f"""
import importlib, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ImportError("blocked by test_adapters: " + name)
sys.meta_path.insert(0, Block())
for name in {ADAPTERS!r}:
    importlib.import_module("conformance.adapters." + name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {BLOCKED!r})
assert not loaded, loaded
"""
    _in_a_fresh_interpreter(code)


def _in_a_fresh_interpreter(code: str) -> str:
    """Run code in a new Python process (for patches an adapter's package makes process-wide); its stdout."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("name", ADAPTERS)
def test_adapter_declares_valid_capabilities_and_binds(name):
    module = importlib.import_module(f"conformance.adapters.{name}")
    impl = load_implementation(name)  # the short --impl name resolves to the adapter
    capabilities = impl.capabilities
    assert capabilities.declared, f"{name} must declare its capabilities"
    assert capabilities.variants and capabilities.devices
    assert impl.module is module
    assert isinstance(module.__version__, str) and module.__version__
    assert callable(module.checkpoint) and callable(module.checkpoint_sequential)


@pytest.mark.parametrize("name", ADAPTERS)
def test_a_missing_package_is_reported_with_how_to_install_it(name, monkeypatch):
    package = THIRD_PARTY[name][0]
    if package.split(".")[0] == "torch":  # (not startswith: torchgpipe is a third party)
        pytest.skip("torch-based adapter: torch is always installed")
    top = package.split(".")[0]
    for loaded in [m for m in sys.modules if m.split(".")[0] == top]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.setitem(sys.modules, top, None)  # makes `import top...` raise ImportError
    module = importlib.import_module(f"conformance.adapters.{name}")
    with pytest.raises(ImportError, match="install"):
        module.checkpoint(torch.sin, torch.ones(2, requires_grad=True), use_reentrant=True)


def test_function_module_registers_the_parameters_the_function_uses():
    linear = torch.nn.Linear(2, 2)
    for function in (linear, linear.forward):
        assert {id(p) for p in FunctionModule(function).parameters()} == {id(p) for p in linear.parameters()}
    assert list(FunctionModule(torch.sin).parameters()) == []


# ------------------------------------------------------------------ behaviour, where the package is installed


def _installed(name):
    package = THIRD_PARTY[name][0]
    try:
        found = importlib.util.find_spec(package) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        pytest.skip(f"{package} is not installed here; run in its environment (docs/THIRD_PARTY.md)")
    if name == "megatron" and not torch.cuda.is_available():
        pytest.skip("unpatched Megatron needs CUDA (megatron_cpu_patched covers CPU)")
    if name == "colossalai" and not torch.cuda.is_available():
        pytest.skip("unpatched ColossalAI needs CUDA (colossalai_cpu_patched covers CPU)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(f"conformance.adapters.{name}")


@pytest.fixture(autouse=True)
def _torch_checkpoint_restored():
    """Unsloth's rows patch torch.utils.checkpoint for the whole process (as Unsloth does for its users); each test
    here gets torch's own back afterwards, so that the torch-based adapters' tests run torch's code."""
    saved = {name: getattr(torch.utils.checkpoint, name) for name in ("checkpoint", "CheckpointFunction")}
    yield
    for name, value in saved.items():
        setattr(torch.utils.checkpoint, name, value)


@pytest.fixture(autouse=True)
def _process_state_restored():
    """Some rows leave process-wide state behind (returnn's scope its saved-tensor hooks, as it is declared to): each
    test gets the process back as it found it, as the suite's isolation hook gives each conformance test."""
    before = isolation.snapshot()
    yield
    isolation.restore_changes(before)


# What deepspeed.checkpointing.configure() sets for the whole process (a training script configures it once).
DEEPSPEED_CONFIGURATION = ("PARTITION_ACTIVATIONS", "CPU_CHECKPOINT", "CONTIGUOUS_CHECKPOINTING", "SYNCHRONIZE",
                           "PROFILE_TIME", "mpu", "num_layers", "deepspeed_checkpointing_enabled")


@pytest.fixture(autouse=True)
def _deepspeed_unconfigured(request):
    """The configured DeepSpeed rows set their options for the whole process, as DeepSpeed's configure() does; a
    conformance run binds one row per process, these tests several: each test gets DeepSpeed's checkpointing module
    back as it was, so that each row runs with its own options only (the plain row with none)."""
    name = request.node.callspec.params.get("name", "") if hasattr(request.node, "callspec") else ""
    if not name.startswith("deepspeed") or importlib.util.find_spec("deepspeed") is None:
        yield
        return
    from conformance.adapters import _deepspeed_configured

    module = importlib.import_module("deepspeed.runtime.activation_checkpointing.checkpointing")
    saved = {key: getattr(module, key) for key in DEEPSPEED_CONFIGURATION}
    yield
    for key, value in saved.items():
        setattr(module, key, value)
    _deepspeed_configured.configure.cache_clear()  # the row configures again at its next call


def _claimed_variants(name):
    lacking = THIRD_PARTY[name][1]
    return [v for v in ("reentrant", "non_reentrant") if v != lacking]


@pytest.mark.parametrize("name", ADAPTERS)
def test_adapter_checkpoints_a_function_in_each_claimed_variant(name):
    module = _installed(name)
    weight = torch.randn(3, 3, requires_grad=True)

    def function(x):
        return torch.tanh(x @ weight).sin()

    for variant in _claimed_variants(name):
        x = torch.randn(4, 3, requires_grad=True)
        expected = _plain_run(function, x, weight)
        with _unless_declared(name, variant):
            out = module.checkpoint(function, x, use_reentrant=variant == "reentrant")
            torch.testing.assert_close(out, expected[0])
            if _broken_after_the_forward(name, variant):
                continue
            out.sum().backward()
            torch.testing.assert_close((x.grad, weight.grad), expected[1:])
        weight.grad = None


def _row_breakages(name, variant) -> list:
    """The row's ``[[breakage]]`` declarations of no clause that cover this variant on the installed torch
    (expectations.toml): failures of the package, which the suite reports, not of the adapter's mapping that these
    checks guard."""
    return [b for b in Expectations.load().breakages
            if b.covers(impl=name, variant=variant, torch_release=release_of(torch.__version__))]


@contextlib.contextmanager
def _unless_declared(name, variant):
    """A failure the row's breakages explain by its causes (as the judge reads them) ends the check: the call reached
    the package. Any other fails it; ``failure = "any"`` excuses nothing here (:func:`_broken_after_the_forward`)."""
    try:
        yield
    except Exception as failure:
        by_cause = [b for b in _row_breakages(name, variant) if not any(p.anything for p in b.failure)]
        if not (by_cause and explains(by_cause, causes_of(failure))):
            raise


def _broken_after_the_forward(name, variant) -> bool:
    """Whether the row declares any failure its package's (``failure = "any"``): the check ends at the forward
    value, which reaches the package through the adapter."""
    return any(p.anything for b in _row_breakages(name, variant) for p in b.failure)


def _plain_run(function, x, *parameters):
    """The output, and the gradients of its sum, of ``function`` run plainly, on a copy of ``x``: taken before the
    checkpointed call, as some rows rewrite their inputs (declared breakages), which the suite reports and this check
    of the adapter's mapping does not."""
    x = x.detach().clone().requires_grad_()
    out = function(x)
    return (out.detach(), *torch.autograd.grad(out.sum(), (x, *parameters)))


@pytest.mark.parametrize("name", ADAPTERS)
def test_adapter_builds_checkpoint_sequential_from_its_checkpoint_without_claiming_it(name):
    module = _installed(name)
    assert ("checkpoint_sequential" in load_implementation(name).capabilities.features) == (name in OWN_SEQUENTIAL)
    if name == "torch_compile_fullgraph":
        pytest.skip("dynamo does not trace torch's checkpoint_sequential: with fullgraph=True it raises, as this "
                    "diagnostic row is meant to show")
    layers = [torch.nn.Linear(3, 3) for _ in range(4)]
    for variant in _claimed_variants(name):
        x = torch.randn(2, 3, requires_grad=True)
        expected_out, expected = _plain_run(torch.nn.Sequential(*layers), x)
        with _unless_declared(name, variant):
            out = module.checkpoint_sequential(layers, 2, x, use_reentrant=variant == "reentrant")
            torch.testing.assert_close(out, expected_out)
            if _broken_after_the_forward(name, variant):
                continue
            out.sum().backward()  # .backward(): the reentrant variants reject autograd.grad
            torch.testing.assert_close(x.grad, expected)


@pytest.mark.parametrize("name", ADAPTERS)
def test_adapter_says_what_it_lacks(name):
    module = _installed(name)
    x = torch.randn(2, requires_grad=True)
    lacking, always_stashes = THIRD_PARTY[name][1], THIRD_PARTY[name][2]
    if lacking is not None:
        with pytest.raises(MISSING_VARIANT_ERROR.get(name, Unsupported)):
            module.checkpoint(torch.sin, x, use_reentrant=lacking == "reentrant")
    if always_stashes:
        with pytest.raises(Unsupported, match="preserve_rng_state"):
            module.checkpoint(torch.sin, x, use_reentrant=True, preserve_rng_state=False)
        with pytest.raises(Unsupported, match="context_fn"):
            module.checkpoint(torch.sin, x, use_reentrant=True, context_fn=contextlib.nullcontext)


def test_unsupported_cannot_pass_for_a_contract_error():
    """A test expecting the contract's error (TypeError, ValueError, RuntimeError/CheckpointError) must
    not be satisfied by an adapter saying its API cannot express the call."""
    assert not issubclass(Unsupported, (TypeError, ValueError, RuntimeError))


class _RecordOps(TorchDispatchMode):
    def __init__(self, seen):
        super().__init__()
        self.seen = seen

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(func)
        return func(*args, **(kwargs or {}))


def test_sac_saves_matmuls_and_recomputes_the_rest():
    from conformance.adapters import torch_sac

    recomputed = []
    x, weight = torch.randn(4, 3, requires_grad=True), torch.randn(3, 3, requires_grad=True)
    out = torch_sac.checkpoint(
        lambda x: torch.sin(x @ weight).exp(), x, use_reentrant=False,  # exp saves its output: sin must rerun
        context_fn=lambda: (contextlib.nullcontext(), _RecordOps(recomputed)),
    )
    out.sum().backward()
    aten = torch.ops.aten
    assert aten.sin.default in recomputed, "the pointwise op is recomputed"
    assert aten.mm.default not in recomputed, "the matmul is served from SAC's cache, not recomputed"


def test_compiled_rows_note_each_graph_break():
    """A test that passed through an eager fallback must not look like a compiled pass: the compiled
    adapters note every graph break of a call (dynamo's counters), and nothing for a call traced whole."""
    impl = load_implementation("torch_compile")  # its notes are its __conformance__'s, read through the binding
    compiled = impl.module
    seen = []

    def with_side_effect(x):
        seen.append(1)  # a Python side effect inside the checkpointed region breaks the graph
        return x.sin()

    x = torch.randn(3, requires_grad=True)
    impl.take_notes()
    compiled.checkpoint(torch.cos, x, use_reentrant=False).sum().backward()
    assert impl.take_notes() == []
    compiled.checkpoint(with_side_effect, x, use_reentrant=False).sum().backward()
    notes = impl.take_notes()
    assert notes and all(n.startswith("graph break, ran eagerly: ") for n in notes)
    assert impl.take_notes() == [], "notes are taken once"


# ------------------------------------------------------------------ issue 26: torchgpipe, its causes by hand


def test_torchgpipe_causes_of_its_declared_deviations():
    """Each cause docs/THIRD_PARTY.md gives for torchgpipe's deviations, shown on one small call."""
    module = _installed("torchgpipe")

    def ck(function, *args):
        return module.checkpoint(function, *args, use_reentrant=True)

    x, linear = torch.randn(2, 3, requires_grad=True), torch.nn.Linear(3, 3)
    with pytest.raises(TypeError, match="concatenate list"):  # its output is a tensor or a tuple of tensors
        ck(lambda x: [x.sin(), x.cos()], x)
    with pytest.raises(TypeError, match="save_for_backward can only save variables"):  # so is its input
        ck(lambda x, n: x * n, x, 2)
    with pytest.raises(IndexError):  # no tensor input: the phony's device is input[0]'s
        ck(lambda: torch.ones(2))
    with pytest.raises(IndexError, match="empty deque"):  # the recompute is joined to output[0] only
        ck(lambda x: (x.sin(), x.cos()), x)[1].sum().backward()
    with pytest.raises(RuntimeError, match="does not require grad"):  # backward over every output, indices too
        ck(lambda x: x.max(dim=1), x)[0].sum().backward()
    out = ck(torch.sin, x)
    out.sum().backward(retain_graph=True)
    with pytest.raises(IndexError, match="empty deque"):  # one-slot deques, popped by the first backward
        out.sum().backward()
    torch.autograd.grad(ck(lambda x: linear(x).sum(), x), x)  # no _is_checkpoint_valid() check
    assert linear.weight.grad is not None, "autograd.grad accumulated into a parameter's .grad"
    linear.weight.grad = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frozen_out = ck(linear, torch.randn(2, 3))  # the phony input requires grad: so does the output
    assert frozen_out.requires_grad and not caught
    frozen_out.sum().backward()
    assert linear.weight.grad is not None, "parameters get gradients although no input requires grad"
    ck(lambda x: x.detach() * 2, x).sum().backward()  # no error for an output without gradient
    dtypes = []

    def matmul(x):
        dtypes.append((x @ x.t()).dtype)
        return (x @ x.t()).float()

    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = ck(matmul, x)
    out.sum().backward()
    assert dtypes == [torch.bfloat16, torch.float32], "the forward's autocast is not replayed in the recompute"


# ------------------------------------------------------------------ issue 26: thunder, its shim and causes by hand


def test_thunder_imports_on_this_torch_and_leaves_the_tensor_class_as_it_was():
    """thunder 0.2.6 names five named-tensor methods torch 2.13 lacks; the shim gives them for the import only."""
    module = _installed("thunder")
    thunder = module._thunder()
    assert thunder.__version__ == "0.2.6" and not thunder.core.interpreter.is_jitting()
    assert not any(hasattr(torch.Tensor, name) for name in module._REMOVED_TENSOR_METHODS), "the stubs were removed"


def _thunder_regions():
    """thunder, and a region checkpointing a function under it (the call the adapter compiles)."""
    thunder = _installed("thunder")._thunder()
    return thunder, lambda function: lambda *args: torch.utils.checkpoint.checkpoint(function, *args, use_reentrant=False)


# Each cause docs/THIRD_PARTY.md gives for thunder's deviations, shown on a small call; where the cause is
# thunder.jit itself, the same call jitted without checkpoint fails (or differs) the same way.


def test_thunder_refuses_the_reentrant_variant_and_keyword_arguments():
    module = _installed("thunder")
    x = torch.randn(2, 3, requires_grad=True)
    with pytest.raises(TypeError, match="exceptions must derive from BaseException"):  # its do_raise gets a str
        module.checkpoint(torch.sin, x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="unexpected keyword argument 'scale'"):  # the lookaside has no **kwargs
        module.checkpoint(lambda x, scale=1.0: x * scale, x, use_reentrant=False, scale=2.0)


def test_thunder_jit_causes_with_and_without_checkpoint():
    thunder, checkpointed = _thunder_regions()
    x = torch.randn(2, 3, requires_grad=True)
    for region in (checkpointed(_detached), _detached):  # every output of a jitted region requires grad
        assert thunder.jit(region)(x).requires_grad
    mask = torch.tensor([[True, False, True]] * 2)
    for region in (checkpointed(_picked_by_dtype), _picked_by_dtype):  # x.dtype is thunder's inside the jit
        with pytest.raises(RuntimeError, match="gather"):
            thunder.jit(region)(x, mask)
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh())
    for region in (checkpointed(lambda x: model[1:](x)), lambda x: model[1:](x)):  # no module built inside
        with pytest.raises(NotImplementedError, match="Modifications of ProvenanceRecord"):
            thunder.jit(region)(x)
    zero_d = torch.tensor(1.5, requires_grad=True)
    for region in (checkpointed(_zero_d_and_wide), _zero_d_and_wide):  # a 0-d argument summed: no backward
        with pytest.raises(RuntimeError, match="too few dimensions"):
            thunder.jit(region)(zero_d, x)[1].backward()


def test_thunder_half_precision_and_complex_gradients_differ_alike_with_and_without_checkpoint():
    thunder, checkpointed = _thunder_regions()
    half = torch.randn(4, 8, dtype=torch.bfloat16, requires_grad=True)
    eager, = torch.autograd.grad(_in_half(half).sum(), half)
    compiled = [torch.autograd.grad(thunder.jit(region)(half).sum(), half)[0]
                for region in (checkpointed(_in_half), _in_half)]
    assert torch.equal(*compiled) and not torch.equal(compiled[0], eager), "jit's own rounding, with or without checkpoint"
    z, x = torch.randn(2, 3, dtype=torch.complex128, requires_grad=True), torch.randn(2, 3, dtype=torch.float64)
    eager, = torch.autograd.grad(_complex_sin(z, x).real.sum(), z)
    compiled = [torch.autograd.grad(thunder.jit(region)(z, x).real.sum(), z)[0]
                for region in (checkpointed(_complex_sin), _complex_sin)]
    assert torch.equal(*compiled) and torch.allclose(compiled[0], eager.conj()), "the conjugate, with or without checkpoint"


def test_thunder_recomputes_the_trace_not_the_function():
    thunder, checkpointed = _thunder_regions()
    calls = []

    def counted(x):
        calls.append(1)
        return x.sin().exp()

    thunder.jit(checkpointed(counted))(torch.randn(3, requires_grad=True)).sum().backward()
    assert len(calls) == 1, "the Python function runs once, while tracing: the backward recomputes the trace"


def test_thunder_checkpoint_gives_lora_adapters_eager_gradients_unless_the_model_drops_out(monkeypatch):
    """GPT-2 under LoRA over frozen embeddings, float64, the adapters' dropout off: checkpointed inside thunder.jit,
    the adapters get eager's gradients when the model's own dropout is off too, and other ones when it is on (the
    family's 0.1), the random ops redrawn in the backward, as in
    test_thunder_checkpoint_redraws_dropout_in_the_backward_on_cpu: the one cause of the models area's LoRA deviation.
    The model's dropout is in the family's config, read when model_families was imported: setting
    model_families.DROPOUT reaches the adapters' dropout only (issue 37)."""
    _installed("thunder")
    pytest.importorskip("peft", reason="the models area's LoRA needs peft (requirements/models.txt)")
    from conformance.fixtures import model_families
    from conformance.suite import test_models

    monkeypatch.setattr(model_families, "DROPOUT", 0.0)  # the adapters' dropout: lora() reads it per call
    dropping = next(family for family in model_families.FAMILIES if family.name == "gpt2")
    not_dropping = dataclasses.replace(dropping, config=dict(dropping.config, resid_pdrop=0.0, embd_pdrop=0.0,
                                                             attn_pdrop=0.0))

    def differing(family):
        _, _, eager = test_models.lora_run(family)
        assert all(grad.count_nonzero() for grad in eager.values()), "a zero gradient compares nothing (lora_B is 0?)"
        _, _, grads = test_models.lora_run(family, _installed("thunder").checkpoint)
        return [name for name, grad in eager.items() if not torch.allclose(grads[name], grad, rtol=1e-6, atol=1e-9)]

    assert not differing(not_dropping), "thunder's checkpoint gave the adapters other gradients with every dropout off"
    assert differing(dropping), "thunder's checkpoint gave the adapters eager's gradients through the model's dropout"


def test_thunder_recompute_runs_under_the_backwards_default_device():
    thunder, checkpointed = _thunder_regions()
    with torch.device("meta"):
        meta_x = torch.ones(3, requires_grad=True)
        plain = thunder.jit(_scaled_by_a_new_tensor)(meta_x)
        recomputed = thunder.jit(checkpointed(_scaled_by_a_new_tensor))(meta_x)
    plain.sum().backward()
    with pytest.raises(RuntimeError, match="expected device meta"):  # its recompute: torch.full on the CPU
        recomputed.sum().backward()


def test_thunder_jit_cannot_differentiate_a_0d_cpu_intermediate_run_autograd_inside_or_take_a_modulo():
    """Three causes of thunder.jit's own (with and without checkpoint): a 0-d CPU tensor is not broadcast, so its
    gradient keeps the other operand's shape and sum's backward cannot expand it, an empty argument as a 0-d one;
    no autograd runs inside the traced region; a tensor has no %."""
    thunder, checkpointed = _thunder_regions()
    x = torch.randn(4, 8, requires_grad=True)
    for region in (checkpointed(_zero_d_and_wide), _zero_d_and_wide):
        with pytest.raises(RuntimeError, match="attempting to expand a dimension of length 4"):
            thunder.jit(region)(torch.randn(0, 8, requires_grad=True), x)
    for region in (checkpointed(_grad_inside), _grad_inside):
        with pytest.raises(TypeError, match="iteration over a 0-dim tensor"):  # autograd.grad's Python on proxies
            thunder.jit(region)(x)
    for region in (checkpointed(_backward_inside), _backward_inside):
        with pytest.raises(AttributeError, match="Unknown attribute requires_grad_"):
            thunder.jit(region)(x)
    for region in (checkpointed(lambda i: i % 8), lambda i: i % 8):  # TensorProxy.__mod__: 'mod' is no method
        with pytest.raises(TypeError, match="'NoneType' object is not callable"):
            thunder.jit(region)(torch.arange(8))


def test_thunder_checkpoint_redraws_dropout_in_the_backward_on_cpu():
    """Thunder's checkpoint tags prims.uniform (dropout's draw) RECOMPUTE_IN_BACKWARD, and on CPU the torch executor
    draws it again in the backward (only nvFuser swaps in a seeded uniform_philox): the gradient follows another mask
    than the output. In float64 the plain jit draws eager's numbers, so the difference is the checkpoint's."""
    thunder, checkpointed = _thunder_regions()

    def seeded(region):
        x = torch.linspace(-1, 1, 64, dtype=torch.float64).reshape(8, 8).requires_grad_()  # sin(x) != 0
        torch.manual_seed(0)
        out = region(x)
        out.sum().backward()
        return out.detach(), x.grad

    eager_out, eager_grad = seeded(_dropped)
    plain_out, plain_grad = seeded(thunder.jit(_dropped))
    out, grad = seeded(thunder.jit(checkpointed(_dropped)))
    assert torch.equal(plain_out, eager_out) and torch.equal(plain_grad, eager_grad)
    assert torch.equal(out, eager_out) and not torch.equal(grad, eager_grad), "the backward differentiates another mask"


def _dropped(x):
    return torch.nn.functional.dropout(x.sin(), p=0.5, training=True).exp()


def _grad_inside(t):
    (g,) = torch.autograd.grad((t**3).sum(), t)
    return t.sin() * g


def _backward_inside(t):
    w = t.detach().requires_grad_()
    (w**3).sum().backward()
    return t.sin() * w.grad


def _detached(x):
    return x.detach() * 2


def _picked_by_dtype(x, index):
    return torch.where(index, x, 2 * x) if index.dtype == torch.bool else x.gather(-1, index)


def _scaled_by_a_new_tensor(x):
    return (x * torch.full((3,), 2.0)).sin()


def _zero_d_and_wide(t, x):
    return t.exp() * 2, (x.sin() + t.sum()).tanh().sum()


_HALF_WEIGHT = torch.randn(8, 8, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)


def _in_half(x):
    return torch.tanh(x @ _HALF_WEIGHT).sin()


def _complex_sin(z, x):
    return (z * x).sin()
# ------------------------------------------------------------------ issue 26 (i26-rows-a): the causes behind declared deviations


def test_unsloth_patch_runs_its_reentrant_function_whatever_use_reentrant_says():
    """unsloth_checkpoint forces use_reentrant=True: a caller's use_reentrant=False gets UnslothCheckpointFunction,
    which refuses torch.autograd.grad as the reentrant variant does."""
    module = _installed("unsloth")
    x = torch.randn(2, 3, requires_grad=True)
    out = module.checkpoint(torch.sin, x, use_reentrant=False)
    assert type(out.grad_fn).__name__ == "UnslothCheckpointFunctionBackward"
    with pytest.raises(RuntimeError, match="grad"):
        torch.autograd.grad(out.sum(), x)


def test_unsloth_gradient_checkpoint_stashes_no_rng_state():
    """Unsloth_Gradient_Checkpointer recomputes without restoring the forward's RNG state: dropout draws a new mask,
    and the gradient follows that mask, not the one that made the output."""
    module = _installed("unsloth_gradient_checkpoint")
    x = torch.ones(1000, requires_grad=True)
    out = module.checkpoint(lambda t: torch.nn.functional.dropout(t, 0.5), x, use_reentrant=True)
    out.sum().backward()
    forward_mask_gradient = (out != 0).float() * 2
    assert not torch.equal(x.grad, forward_mask_gradient)


def test_colossalai_non_reentrant_leaves_the_rng_at_the_forward_state():
    """ColossalAI's _checkpoint_without_reentrant sets the CPU RNG back to the forward's state for the recompute and
    never restores the caller's: after backward the stream is where the recompute left it."""
    module = _installed("colossalai_cpu_patched")
    for reentrant, restored in ((True, True), (False, False)):
        x = torch.randn(4, requires_grad=True)
        out = module.checkpoint(lambda t: torch.nn.functional.dropout(t, 0.5), x, use_reentrant=reentrant)
        torch.rand(3)  # a draw between forward and backward
        before_backward = torch.get_rng_state()
        out.sum().backward()
        assert torch.equal(torch.get_rng_state(), before_backward) == restored


def test_returnn_scope_keeps_its_hooks_after_the_call_and_replays_ops_not_the_function():
    """gradient_checkpoint_scope leaves its saved-tensor hooks installed after the call while a tensor made in the
    scope (the output) is alive, and its recompute replays the recorded aten ops: the Python function runs once."""
    module = _installed("returnn")
    calls = []

    def function(t):
        calls.append(1)
        return t.sin().exp()

    x = torch.randn(3, requires_grad=True)
    assert torch._C._autograd._top_saved_tensors_default_hooks(False) is None
    out = module.checkpoint(function, x, use_reentrant=False)
    assert torch._C._autograd._top_saved_tensors_default_hooks(False) is not None
    out.sum().backward()
    torch.testing.assert_close(x.grad, (x.cos() * x.sin().exp()).detach())
    assert len(calls) == 1
    del out
    assert torch._C._autograd._top_saved_tensors_default_hooks(False) is None


RETURNN_THEN_TORCH = """
import torch, torch.utils.checkpoint
from conformance.adapters import returnn

def call(checkpoint, **options):
    x = torch.randn(3, requires_grad=True)
    checkpoint(lambda t: (t.sin() * 2).cos(), x, **options).sum().backward()

call(returnn.checkpoint, use_reentrant=False)
try:
    call(torch.utils.checkpoint.checkpoint, use_reentrant=False)
except Exception as error:
    print(type(error).__name__, error)
"""


def test_returnn_scope_breaks_the_next_saved_tensor_hooks_scope():
    """After a gradient_checkpoint_scope call whose tensors died, its hooks are still pushed until the next
    saved_tensors_hooks scope; that scope's enter pops them and restores torch's methods, and its exit, already
    bound to RETURNN's, raises: here torch's own non-reentrant checkpoint, called next, fails."""
    _installed("returnn")
    printed = _in_a_fresh_interpreter(RETURNN_THEN_TORCH)
    assert "saved_tensors_hooks __exit__ mismatch" in printed, printed


def test_unsloth_reentrant_backward_gives_no_gradient_where_torch_raises():
    """UnslothCheckpointFunction.backward has torch's 'none of output has requires_grad=True' error commented out: a
    region whose output needs no gradient gives its input none, silently."""
    module = _installed("unsloth")
    x = torch.randn(3, requires_grad=True)
    module.checkpoint(lambda t: t.detach() * 2, x, use_reentrant=True).sum().backward()
    assert x.grad is None


def test_unsloth_gradient_checkpointer_takes_one_tensor_in_and_one_gradient_back_and_skips_the_reentrant_checks():
    """Unsloth_Gradient_Checkpointer is built for a decoder layer's hidden state: its first argument goes through
    save_for_backward, its backward takes one output gradient, and it keeps no _is_checkpoint_valid() check."""
    module = _installed("unsloth_gradient_checkpoint")
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(TypeError, match="save_for_backward can only save variables"):
        module.checkpoint(lambda flag, t: t * 2, True, x, use_reentrant=True)
    two = module.checkpoint(lambda t: (t.sin(), t.cos()), x, use_reentrant=True)
    with pytest.raises(TypeError, match="takes 2 positional arguments"):
        (two[0] + two[1]).sum().backward()
    gradient, = torch.autograd.grad(module.checkpoint(torch.sin, x, use_reentrant=True).sum(), x)  # torch raises here
    torch.testing.assert_close(gradient, x.cos().detach())


RETURNN_CTC_LOSS = """
import torch, torch.utils.checkpoint
from torch.utils._python_dispatch import TorchDispatchMode
from conformance.adapters import returnn

class FreshMemoryIsNaN(TorchDispatchMode):  # makes the uninitialized memory a replay reads visible
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.ops.aten.empty.memory_format and out.is_floating_point():
            out.fill_(float("nan"))
        return out

torch.manual_seed(0)
log_probs = torch.randn(50, 3, 15, dtype=torch.float64).log_softmax(2).detach().requires_grad_()
targets = torch.randint(1, 15, (3, 30), dtype=torch.int32)
loss = lambda x: torch.nn.functional.ctc_loss(x, targets, (50, 50, 50), (30, 25, 20))  # reduction="mean"
for name, checkpoint in (("torch", torch.utils.checkpoint.checkpoint), ("returnn", returnn.checkpoint)):  # torch first: after
    # a RETURNN scope, torch's own checkpoint meets the exit mismatch (test_returnn_scope_breaks_the_next_...)
    with FreshMemoryIsNaN():
        gradient, = torch.autograd.grad(checkpoint(loss, log_probs, use_reentrant=False), log_probs)
    print(name, int(gradient.isnan().sum()))
"""


def test_returnn_replay_of_ctc_loss_divides_by_memory_it_never_filled():
    """ctc_loss(reduction='mean') divides by at::tensor(target_lengths), made as aten.empty plus a copy outside the
    dispatcher: the scope records only the empty, so its replay divides the gradient by uninitialized memory (NaN
    here, silently wrong values otherwise). torch's checkpoint re-runs the function."""
    _installed("returnn")
    printed = _in_a_fresh_interpreter(RETURNN_CTC_LOSS)
    assert printed.split() == ["torch", "0", "returnn", "2250"], printed
