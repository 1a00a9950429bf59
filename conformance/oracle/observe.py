"""Run a program and record everything its user can observe, step by step; compare two such records.

A program is a function ``run(api, record)`` (conformance/oracle/program.py writes its source): it builds
its tensors and modules, hands them to ``record.watch``, and performs each step of the caller (the
forward call, draws, in-place changes, each backward) as ``record("name", thunk)``. ``api`` is either
the implementation under test (``checkpoint``, ``checkpoint_sequential``) or PLAIN, which runs the
function directly: the same program, checkpointed and not.

After each step the record holds: the step's result (structure, container types, dtypes, devices,
shapes, requires_grad, values, and which tensors share memory with each other or with the watched
inputs), the exception it raised (the program stops there), the warnings, every watched leaf's
gradient (None included), the watched objects themselves (the caller's inputs and parameters) and the
process state (RNG stream, grad mode, autocast, saved-tensor hooks, default device, the checkpoint
module's switches).

This module imports torch and the standard library only: the standalone reproducer scripts
(conformance/oracle/script.py) embed its source verbatim.
"""

from __future__ import annotations

import contextlib
import functools  # noqa: F401  (programs hand checkpoint functools.partial objects)
import logging
import sys
import warnings
from dataclasses import dataclass, field

import torch

CHECKPOINT_OPTIONS = ("use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug", "early_stop")


class _Plain:
    """The un-checkpointed program: checkpoint(f, *args) is f(*args); checkpoint's own options are dropped."""

    @staticmethod
    def checkpoint(function, *args, **kwargs):
        return function(*args, **{k: v for k, v in kwargs.items() if k not in CHECKPOINT_OPTIONS})

    @staticmethod
    def checkpoint_sequential(functions, segments, input, **options):
        for f in functions:
            input = f(input)
        return input


PLAIN = _Plain()


class Halt(Exception):
    """A step raised: the program stops there, as the caller's would."""


def loss_of(output):
    """The sum of every floating tensor in output that requires grad (a constant if none does)."""
    terms = [(t.abs() if t.is_complex() else t).sum() for t in tensors_in(output)
             if t.requires_grad and (t.is_floating_point() or t.is_complex())]
    return sum(terms[1:], terms[0]) if terms else torch.zeros(())


def change_in_place(tensor):
    with torch.no_grad():
        tensor.mul_(2)


def noop_contexts():
    """A context_fn that changes nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def default_device_set(device):
    """torch.set_default_device(device) for the block: the global setter, not the torch.device context."""
    torch.set_default_device(device)
    try:
        yield
    finally:
        torch.set_default_device(None)


def suppressing_contexts():
    """A context_fn whose forward manager swallows a ValueError (checkpoint must still raise it)."""
    return contextlib.suppress(ValueError), contextlib.nullcontext()


class Token:
    """An object of the caller's own, passed as a non-tensor argument (the region may compare it by identity)."""


class Block(torch.nn.Module):
    """A module whose forward runs a function, holding the modules the function uses (a model's block)."""

    def __init__(self, function, **modules):
        super().__init__()
        self.function = function
        for name, module in modules.items():
            self.add_module(name, module)

    def forward(self, *args, **kwargs):
        return self.function(*args, **kwargs)


class Residual(torch.nn.Module):
    """A block whose forward is more than the chain of its layers."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, h):
        return h + self.layer(h)


class Lambda(torch.nn.Module):
    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, h):
        return self.function(h)


def total(output) -> float:
    """The sum of every floating tensor in output, as a number."""
    return float(sum(t.detach().abs().double().sum() for t in tensors_in(output) if t.is_floating_point() or t.is_complex()))


def first_tensor(output):
    return next(t for t in tensors_in(output) if t.is_floating_point() or t.is_complex())


def tensors_in(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []


# --------------------------------------------------------------------------------------- summaries

@dataclass(frozen=True)
class TensorSummary:
    dtype: str
    device: str
    shape: tuple
    requires_grad: bool
    value: torch.Tensor  # detached copy

    def __repr__(self):
        return f"tensor({self.dtype}, {self.device}, {list(self.shape)}, requires_grad={self.requires_grad})"


def summarize(value):
    """A comparable copy of a value: tensors summarized, containers kept with their exact type."""
    if isinstance(value, torch.Tensor):
        return TensorSummary(str(value.dtype).removeprefix("torch."), value.device.type, tuple(value.shape),
                             value.requires_grad, value.detach().clone())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [summarize(v) for v in value])
    if isinstance(value, dict):
        return ("dict", {k: summarize(v) for k, v in value.items()})
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return f"<{type(value).__name__}>"


def _paths(value, path="out"):
    if isinstance(value, torch.Tensor):
        yield path, value
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _paths(v, f"{path}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, f"{path}[{k!r}]")


def _storage(t):
    return (t.untyped_storage().data_ptr(), t.storage_offset()) if t.device.type != "meta" else id(t)


def aliasing(value, watched) -> frozenset:
    """Pairs (output path, other path) of tensors that share memory: outputs with each other, with inputs."""
    tensors = list(_paths(value)) + [(n, t) for n, t in watched.items() if isinstance(t, torch.Tensor)]
    pairs = set()
    for i, (a, ta) in enumerate(tensors):
        for b, tb in tensors[i + 1:]:
            if a.startswith("out") and _storage(ta) == _storage(tb) and ta.numel() > 0:
                pairs.add((a, b))
    return frozenset(pairs)


def _top_hooks():
    autograd = torch._C._autograd
    return autograd._top_saved_tensors_default_hooks(False) if hasattr(autograd, "_top_saved_tensors_default_hooks") else None


def process_state(hooks_before) -> dict:
    """What a step may leave changed in the process, besides the tensors."""
    autograd = torch._C._autograd
    ckpt = sys.modules.get("torch.utils.checkpoint")
    return {
        "rng": torch.get_rng_state(),
        "grad mode": torch.is_grad_enabled(),
        "inference mode": torch.is_inference_mode_enabled(),
        "autocast": (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")),
        "saved-tensor hooks as before the program": _top_hooks() == hooks_before,
        "saved-tensor hooks enabled": autograd._saved_tensors_hooks_is_enabled(),
        "default device": str(torch.get_default_device()),
        "default dtype": torch.get_default_dtype(),
        "checkpoint switches": (getattr(ckpt, "_enable_checkpoint_early_stop", None),
                                getattr(ckpt, "_checkpoint_debug_enabled", None)),
    }


def _object_summary(obj):
    if isinstance(obj, list):
        return summarize(obj)
    if isinstance(obj, torch.nn.Module):
        return ("dict", {n: summarize(p) for n, p in obj.named_parameters()})
    return ("tuple", [summarize(obj), f"is_leaf={obj.is_leaf}", f"stride={tuple(obj.stride())}"])


def _gradients(watched):
    grads = {}
    for name, obj in watched.items():
        if isinstance(obj, torch.nn.Module):
            grads.update({f"{name}.{n}": p.grad for n, p in obj.named_parameters()})
        elif isinstance(obj, torch.Tensor) and obj.is_leaf and obj.requires_grad:
            grads[name] = obj.grad
    return {n: None if g is None else g.detach().clone() for n, g in grads.items()}


@dataclass
class Step:
    name: str
    backward: bool = False  # a backward step: its result is gradients
    result: object = None
    aliases: frozenset = frozenset()
    exception: type | None = None
    message: str = ""
    warnings: tuple = ()
    gradients: dict = field(default_factory=dict)
    objects: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)


class Record:
    """Called by the program for each step; keeps one Step per step run."""

    def __init__(self):
        self.steps: list[Step] = []
        self.watched: dict = {}
        self.value = None
        self.hooks_before = _top_hooks()

    def leaves(self):
        """The watched tensors that require grad, then every parameter: what autograd.grad asks about."""
        tensors = [t for t in self.watched.values() if isinstance(t, torch.Tensor) and t.requires_grad]
        return tensors + [p for m in self.watched.values() if isinstance(m, torch.nn.Module) for p in m.parameters()]

    def last(self):
        """What the last step returned."""
        return self.value

    def watch(self, **objects):
        """The caller's tensors and modules: their gradients and their state are observed after every step."""
        self.watched.update(objects)

    def __call__(self, name, thunk, backward=False):
        step = Step(name, backward)
        self.steps.append(step)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value = thunk()
            except Exception as exc:  # noqa: BLE001  (observed: which exception, at which step)
                step.exception, step.message, value = type(exc), f"{type(exc).__name__}: {exc}"[:300], None
        step.warnings = tuple(sorted(_warning(w) for w in caught))
        step.result, step.aliases = summarize(value), aliasing(value, self.watched)
        step.gradients = _gradients(self.watched)
        step.objects = {n: _object_summary(o) for n, o in self.watched.items()}
        step.state = process_state(self.hooks_before)
        if step.exception is not None:
            raise Halt(step.message)
        self.value = value
        return value


def observe(run, api) -> list[Step]:
    """Run the program once through api (PLAIN or an implementation) and return its steps.

    Log records are not observed, and not emitted: torch 2.13's debug mode logs a record whose arguments
    do not match its format, which a handler that raises on bad records (pytest's) turns into an error."""
    record = Record()
    logging_disabled = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        run(api, record)
    except Halt:
        pass
    finally:
        logging.disable(logging_disabled)
    return record.steps


# ---------------------------------------------------------------------------------------- compare

@dataclass(frozen=True)
class Difference:
    step: int
    name: str  # the step's name
    observable: str  # one of OBSERVABLES
    detail: str

    def __str__(self):
        return f"step {self.step} ({self.name}): {self.observable}: {self.detail}"


def _warning(caught: warnings.WarningMessage) -> str:
    """A warning's category, and whether it speaks of use_reentrant (a clause of its own): not its wording."""
    about = " (use_reentrant)" if "use_reentrant" in str(caught.message) else ""
    return caught.category.__name__ + about


# What the comparison can find different, in the order it looks.
OBSERVABLES = ("exception", "exception-type", "warnings", "result", "requires-grad", "aliasing", "gradient-presence",
               "zero-gradient-for-none", "gradients",
               "objects", "rng", "state")


def _close(a, b) -> str | None:
    """Why two tensor values differ (None: close), with torch.testing's defaults for their dtype."""
    try:
        torch.testing.assert_close(a, b, equal_nan=True, check_device=False)
    except AssertionError as exc:
        return str(exc).strip().splitlines()[0] + " " + " ".join(str(exc).split("\n")[1:4])
    return None


def _compare_values(actual, expected, where, out):
    """Differences of two summaries, split into requires-grad and result (the rest)."""
    if isinstance(expected, TensorSummary) and isinstance(actual, TensorSummary):
        if (actual.dtype, actual.device, actual.shape) != (expected.dtype, expected.device, expected.shape):
            out.append(("result", f"{where}: {actual!r}, the plain run gives {expected!r}"))
            return
        if actual.requires_grad != expected.requires_grad:
            out.append(("requires-grad", f"{where}: requires_grad={actual.requires_grad}, the plain run's {expected.requires_grad}"))
        why = _close(actual.value, expected.value)
        if why:
            out.append(("result", f"{where}: values differ: {why}"))
    elif isinstance(expected, tuple) and isinstance(actual, tuple) and len(expected) == 2 and len(actual) == 2 \
            and expected[0] == actual[0] and len(expected[1]) == len(actual[1]):
        items = expected[1].items() if isinstance(expected[1], dict) else enumerate(expected[1])
        if isinstance(expected[1], dict) and list(expected[1]) != list(actual[1]):
            out.append(("result", f"{where}: keys {list(actual[1])}, the plain run's {list(expected[1])}"))
            return
        for key, e in items:
            _compare_values(actual[1][key], e, f"{where}[{key!r}]", out)
    elif type(actual) is not type(expected) or actual != expected:
        out.append(("result", f"{where}: {_shape_of(actual)}, the plain run gives {_shape_of(expected)}"))


def _shape_of(summary) -> str:
    if isinstance(summary, tuple) and len(summary) == 2 and isinstance(summary[0], str):
        return f"a {summary[0]} of {len(summary[1])}"
    return repr(summary)


def _compare_gradients(actual, expected, out):
    for name in expected.keys() | actual.keys():
        a, e = actual.get(name), expected.get(name)
        if e is None and a is not None and not a.any():
            out.append(("zero-gradient-for-none", f"{name}: a zero gradient, the plain run gives None"))
        elif (a is None) != (e is None):
            out.append(("gradient-presence", f"{name}: {'None' if a is None else 'a gradient'}, the plain run gives "
                                             f"{'None' if e is None else 'a gradient'}"))
        elif a is not None:
            why = _close(a, e)
            if why:
                out.append(("gradients", f"{name}: {why}"))


def _compare_state(actual, expected, out):
    for key, e in expected.items():
        a = actual.get(key)
        if key == "rng":
            if not torch.equal(a, e):
                out.append(("rng", "the global RNG stream differs from the plain run's (a draw now gives other numbers)"))
        elif a != e:
            out.append(("state", f"{key}: {a!r}, the plain run leaves {e!r}"))


def compare_step(actual: Step, expected: Step) -> list[tuple[str, str]]:
    """(observable, detail) for everything that differs at one step."""
    out = []
    if actual.exception is not expected.exception and not (
            actual.exception and expected.exception and issubclass(actual.exception, expected.exception)):
        both = actual.exception is not None and expected.exception is not None
        out.append(("exception-type" if both else "exception", f"raises {actual.message or 'nothing'}; the plain run {expected.message or 'raises nothing'}"))
    if actual.warnings != expected.warnings:
        out.append(("warnings", f"warns {list(actual.warnings)}; the plain run {list(expected.warnings)}"))
    results = []
    _compare_values(actual.result, expected.result, "result", results)
    out += [("gradients" if expected.backward and o == "result" else o, d) for o, d in results]
    if actual.aliases != expected.aliases:
        out.append(("aliasing", f"shares memory {sorted(actual.aliases)}; the plain run {sorted(expected.aliases)}"))
    _compare_gradients(actual.gradients, expected.gradients, out)
    for name, e in expected.objects.items():
        inner = []
        _compare_values(actual.objects.get(name), e, name, inner)
        out += [("objects", f"the caller's {detail}") for _, detail in inner]
    _compare_state(actual.state, expected.state, out)
    return out


def compare(actual: list[Step], expected: list[Step]) -> list[Difference]:
    """Every difference, step by step, until either run stops."""
    found = []
    for i, (a, e) in enumerate(zip(actual, expected)):
        found += [Difference(i, e.name, observable, detail) for observable, detail in compare_step(a, e)]
    return found


def program(source: str):
    """The run(api, record) function a program's source defines, with this module's helpers in scope."""
    namespace = dict(globals())
    exec(compile(source, "<program>", "exec"), namespace)  # noqa: S102  (the oracle's own generated code)
    return namespace["run"]
