"""Run a program and record everything its user can observe, step by step (compare.py compares two such records).

A program is a function ``run(api, record)`` (conformance/oracle/program.py writes its source): it builds
its tensors and modules, hands them to ``record.watch``, and performs each step of the caller (the
forward call, draws, in-place changes, each backward) as ``record("name", thunk)``. ``api`` is either
the implementation under test (``checkpoint``, ``checkpoint_sequential``) or PLAIN, which runs the
function directly: the same program, checkpointed and not.

After each step the record holds: the step's result (structure, container types, dtypes, devices,
shapes, requires_grad, values, and which tensors share memory with each other or with the watched
inputs), the exception it raised (the program stops there), the warnings, every watched leaf's
gradient (None included), the watched objects themselves (the caller's inputs and parameters) and the
process state: torch's RNG streams, the saved-tensor hooks, and every global setting torch's getters read,
derived by rule (settings(): grad mode, autocast per device type, the backends' flags, ..., Python's and
NumPy's global generators, the checkpoint module's switches).

This module imports torch, the standard library and one name of the vocabulary only: the standalone reproducer
scripts (conformance/oracle/script.py) embed its source verbatim, with that name's value written in.
"""

from __future__ import annotations

import enum
import functools  # programs also hand checkpoint functools.partial objects
import gc
import logging
import random
import re
import sys
import time
import warnings
import weakref
from dataclasses import dataclass, field

import torch
from torch.multiprocessing.reductions import StorageWeakRef

from conformance.oracle.prelude import Halt, tensors_in



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


def _memory(t):
    """The address of a tensor's memory, whichever view of it the tensor is (None: it has none to compare)."""
    try:
        return t.untyped_storage().data_ptr() or None
    except (RuntimeError, NotImplementedError):  # a tensor without storage (a subclass's, a functional wrapper)
        return None


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


# ------------------------------------------------------------------------------------ process state
#
# The process state is derived, not listed, so that a setting torch adds joins without code: every global
# setting a zero-argument getter of torch reads, read after every step. Where the getters are found:
# - by name: torch.is_*/are_*/get_*, the autograd module's (and torch.autograd.graph's), and torch.backends'
#   modules' getters (also *_enabled/*_allowed: torch.backends.cuda.flash_sdp_enabled());
# - torch.backends' flags: the plain values their modules show as attributes (cudnn.benchmark, ...);
# - torch._C's getters that have a setter (_get_X beside _set_X): the backends' flags are properties over
#   them, and some (torch.backends.cuda.matmul.allow_tf32) are reachable only there.
# A getter is kept only where a rule says it reads a setting (rules, not names, so that none is missed):
# it takes no argument and does not raise, warns nothing (a deprecated alias of another getter), returns
# a plain value (None, bool, number, str, dtype, device, an enum of Python's or of torch's C++, or a sequence
# or mapping of them), returns the same
# value when called again (not a counter or a clock), changes no other getter's value, and is fast.
# Besides them: torch's default RNG stream, autocast for every device type autocast knows, the
# saved-tensor hooks, the Python and NumPy global generators, the checkpoint module's own switches, and
# every torch.Generator the program watches (record.watch).
_GETTER = r"(is|are|get)_\w+"
_BACKEND_GETTER = rf"({_GETTER}|\w+_(enabled|allowed))"
_GETTER_MODULES = ("torch", "torch.autograd", "torch.autograd.graph")
_SLOW_S = 0.005  # a getter read after every step of every program may cost no more than this

# Getters the rules keep whose value changes with the run, not with a setting: never state left behind.
NOT_SETTINGS = {
    "torch._C._get_thread_name": "the name of whichever thread reads it (thread-local), not a process setting",
}
_PLAIN = (type(None), bool, int, float, str, torch.dtype, torch.device, enum.Enum)


def _comparable(value):
    """value as an exactly comparable plain value (sequences as tuples, mappings as sorted pairs, an array as
    its bytes), or _NotPlain where it holds anything else."""
    if isinstance(value, _PLAIN):
        return value
    if hasattr(type(value), "__members__") and hasattr(value, "name"):  # an enum of torch's C++ (the BLAS backend)
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, (list, tuple)):
        if all(type(v) is int for v in value):  # at once: Python's generator state holds 625 of them
            return tuple(value)
        return tuple(_comparable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _comparable(v)) for k, v in value.items()))
    if type(value).__name__ == "ndarray":  # NumPy's generator state (NumPy need not be installed)
        return value.tobytes()
    raise _NotPlain(type(value).__name__)


class _NotPlain(TypeError):
    pass


def _read(getter):
    """What getter returns now, comparable; a getter that raises here reads as the exception it raises.
    Call it with warnings ignored: reading the state is not the step's business."""
    try:
        return _comparable(getter())
    except _NotPlain as other:
        return f"<{other}>"
    except Exception as exc:  # noqa: BLE001  (a state too: the same in both runs where nothing leaked)
        return f"raises {type(exc).__name__}"


def _named_getters():
    """Candidate getters: {qualified name: zero-argument callable}, each function once."""
    found = {}
    modules = [(name, _GETTER) for name in _GETTER_MODULES]
    modules += [(name, _BACKEND_GETTER) for name in sorted(sys.modules) if name.startswith("torch.backends.")]
    for module_name, pattern in modules:
        module = sys.modules.get(module_name)
        for attribute in dir(module) if module is not None else ():
            candidate = getattr(module, attribute, None)
            if re.fullmatch(pattern, attribute) and callable(candidate) and not isinstance(candidate, type):
                found.setdefault(id(candidate), (f"{module_name}.{attribute}", candidate))
    private = set(dir(torch._C))
    for attribute in sorted(private):
        match = re.fullmatch(r"_(is|are|get)_(\w+)", attribute)
        if match and f"_set_{match.group(2)}" in private:
            candidate = getattr(torch._C, attribute)
            found.setdefault(id(candidate), (f"torch._C.{attribute}", candidate))
    return dict(found.values())


def _backend_flags():
    """torch.backends' flags: {qualified name: getter} for each plain-valued attribute of its modules."""
    flags = {}
    for module_name in sorted(n for n in sys.modules if n.startswith("torch.backends")):
        module = sys.modules[module_name]
        for attribute in sorted(set(dir(module)) | set(dir(type(module)))):  # a module class's properties too
            if attribute.startswith("__"):
                continue
            read = functools.partial(getattr, module, attribute)
            if _is_plain(read):
                flags[f"{module_name}.{attribute}"] = read
    return flags


def _is_plain(getter) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a getter that warns is a deprecated alias: read its successor
            _comparable(getter())
        return True
    except Exception:  # noqa: BLE001  (raises, warns, or returns something else: not a setting)
        return False


def _stable(getters: dict) -> dict:
    """The getters that read the same value again right away (not a counter or a clock), quickly, and whose
    reading moves no other getter's value."""
    first, again, slow = {}, {}, set()
    for name, getter in getters.items():
        first[name] = _read(getter)
        started = time.perf_counter()
        again[name] = _read(getter)
        if time.perf_counter() - started > _SLOW_S:
            slow.add(name)
    steady = {n: g for n, g in getters.items() if first[n] == again[n] and n not in slow}
    return {n: g for n, g in steady.items() if not _moves_others(n, steady)}


def _moves_others(name: str, getters: dict) -> bool:
    """Reading getters[name] changes a getter's value that stays put while it is not read (a side effect)."""
    others = {n: g for n, g in getters.items() if n != name}
    before, still = _snapshot(others), _snapshot(others)
    _read(getters[name])
    after = _snapshot(others)
    return any(before[n] == still[n] != after[n] for n in others)


def _snapshot(getters: dict) -> dict:
    return {n: _read(g) for n, g in getters.items()}


def _autocast_device_types() -> list[str]:
    """Every device type autocast knows: torch's device types (the backends its dispatch keys name, and the
    private-use backend's own name) for which autocast's getters do not raise."""
    names = {key.lower() for key in torch._C.DispatchKey.__members__} | {torch._C._get_privateuse1_backend_name()}
    types = set()
    for name in names:
        try:
            device_type = torch.device(name).type
            _autocast_state(device_type)
            types.add(device_type)
        except Exception:  # noqa: BLE001  (not a device type, or one autocast does not know)
            pass
    return sorted(types)


def _checkpoint_switches():
    """The checkpoint module's own switches, as one getter: its globals whose values are None, bools, numbers
    or strings (set_checkpoint_early_stop's and set_checkpoint_debug_enabled's), and its classes'
    zero-argument getters (DefaultDeviceType.get_device_type, read through the getter: its first call, by
    any checkpoint, picks the device type)."""
    import torch.utils.checkpoint as ckpt

    names = [n for n, v in vars(ckpt).items() if not n.startswith("__") and isinstance(v, (type(None), bool, int, float, str))]
    getters = {f"{c.__name__}.{n}": getattr(c, n) for c in vars(ckpt).values()
               if isinstance(c, type) and c.__module__ == ckpt.__name__
               for n in dir(c) if re.fullmatch(_GETTER, n) and _is_plain(getattr(c, n))}
    return lambda: {**{n: getattr(ckpt, n) for n in names}, **{n: getter() for n, getter in getters.items()}}


@functools.cache
def settings() -> dict:
    """{name: getter} of every global setting read after each step: derived once per process, so the plain
    and the checkpointed run read the same ones."""
    getters = {n: g for n, g in _named_getters().items() if _is_plain(g)} | _backend_flags()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.device("mkldnn") warns, for one
        found = _stable({n: g for n, g in getters.items() if n not in NOT_SETTINGS})
        device_types = _autocast_device_types()
    for device_type in device_types:
        found[f"autocast ({device_type})"] = functools.partial(_autocast_state, device_type)
    found["python random"] = random.getstate
    if "numpy" in sys.modules:  # read only where the process has NumPy already: scripts need only torch
        found["numpy random"] = functools.partial(sys.modules["numpy"].random.get_state, legacy=False)
    found["checkpoint switches"] = _checkpoint_switches()  # one entry: Observation pops it while the caller holds one
    return found


def _autocast_state(device_type):
    return torch.is_autocast_enabled(device_type), torch.get_autocast_dtype(device_type)


def process_state(hooks_before, watched=None) -> dict:
    """What a step may leave changed in the process, besides the tensors: torch's RNG streams (the default
    generator's, and each torch.Generator among the watched objects), the saved-tensor hooks, and every
    setting settings() derives."""
    autograd = torch._C._autograd
    state = {
        "rng": torch.get_rng_state(),
        **{f"generator {n}": g.get_state() for n, g in (watched or {}).items() if isinstance(g, torch.Generator)},
        "saved-tensor hooks as before the program": _top_hooks() == hooks_before,
        "saved-tensor hooks enabled": autograd._saved_tensors_hooks_is_enabled(),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return state | _snapshot(settings())


def _object_summary(obj):
    if isinstance(obj, torch.Generator):
        return "a generator (its stream is compared with the process state)"
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


def _warning(caught: warnings.WarningMessage) -> str:
    """A warning, and whether it speaks of use_reentrant (warnings.explicit-use-reentrant-silent's business):
    not its wording, and not its category, which the docs never name (any Warning is a warning)."""
    return "a warning about use_reentrant" if "use_reentrant" in str(caught.message) else "a warning"


def _precision(before):
    """The lowest precision computed in, with the step about to run: autocast's dtype where it is on (CPU), else as before.
    Values computed under float16 autocast carry float16's rounding, in whatever dtype they are stored, and the
    recompute may round in another order (a weight cast once and shared, or cast again): compared at float16's
    tolerance, not at the float32 the gradients are kept in."""
    if torch.is_autocast_enabled("cpu"):
        dtype = torch.get_autocast_dtype("cpu")
        return dtype if before is None or torch.finfo(dtype).eps > torch.finfo(before).eps else before
    return before


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
    hooks: tuple = ()  # the labels of the program's hooks that fired during the step, in order (Observation.fired)
    alive: frozenset = frozenset()  # the followed tensors alive after the step (Observation.follow), before a collection
    collected: frozenset = frozenset()  # of those, the ones the garbage collector then freed (a reference cycle held them)
    held_packs: int = 0  # tensors the program made, packed by the caller's saved-tensor hooks, the graph holds after the step
    precision: object = None  # the lowest autocast dtype the program has computed in so far: its values are compared at it


class Observation:
    """Called by the program for each step; keeps one Step per step run."""

    def __init__(self):
        self.steps: list[Step] = []
        self.watched: dict = {}
        self.value = None
        self.hooks_before = _top_hooks()
        self.held = []  # the API's own switches the caller entered (hold) and has not left (release)
        self.going_on = False  # the caller catches a failing step's exception and goes on (go_on_after_errors)
        self.fired_hooks: list[str] = []  # the labels of the program's hooks, as they fire
        self.followed: dict[str, StorageWeakRef] = {}  # the tensors whose memory's lifetime is observed, by name
        self.produced_packs: list[weakref.ref] = []  # the program's tensors the caller's saved-tensor hooks packed

    def leaves(self):
        """The watched tensors that require grad, then every parameter: what autograd.grad asks about."""
        tensors = [t for t in self.watched.values() if isinstance(t, torch.Tensor) and t.requires_grad]
        return tensors + [p for m in self.watched.values() if isinstance(m, torch.nn.Module) for p in m.parameters()]

    def last(self):
        """What the last step returned."""
        return self.value

    def watch(self, **objects):
        """The caller's tensors and modules: their gradients and their state are observed after every step
        (and the tensors' lifetimes)."""
        self.watched.update(objects)
        for name, obj in objects.items():
            self.follow(name, obj)

    def go_on_after_errors(self):
        """From here on the caller catches a failing step's exception and goes on (the step still records it)."""
        self.going_on = True

    def hold(self, switch):
        """The caller enters one of the API's own context managers (set_checkpoint_early_stop, ...) and holds
        it until release(switch): not as a with block, so that several can be left in any order."""
        switch.__enter__()
        self.held.append(switch)
        return switch

    def release(self, switch):
        self.held.remove(switch)
        switch.__exit__(None, None, None)

    def release_all(self):
        """Leave what the program still holds (it stopped early), innermost first."""
        while self.held:
            self.release(self.held[-1])

    # ----------------------------------------------------- the program's hooks and tensor lifetimes (issue 35)
    def hook_modules(self, *, full_backward=True, **modules):
        """A forward pre-hook, a forward hook and (full_backward) a full backward hook on each module, logging
        pre:NAME, fwd:NAME and bwd:NAME as they fire (Step.hooks: the labels fired during each step, in order;
        the closures hold the log only: no tensor, no cycle)."""
        log = self.fired_hooks
        for name, module in modules.items():
            module.register_forward_pre_hook(lambda *_, n=name: log.append(f"pre:{n}"))
            module.register_forward_hook(lambda *_, n=name: log.append(f"fwd:{n}"))
            if full_backward:
                module.register_full_backward_hook(lambda *_, n=name: log.append(f"bwd:{n}"))

    def hook_tensor(self, name, value):
        """A hook on the first tensor in value that requires grad (if any), logging grad:NAME as it fires."""
        log = self.fired_hooks
        for tensor in [t for t in tensors_in(value) if t.requires_grad][:1]:
            tensor.register_hook(lambda _, n=name: log.append(f"grad:{n}"))

    def saved_tensors_logged(self):
        """The caller's saved_tensors_hooks, logging each pack and unpack; a packed tensor the program made
        (its memory is none of the caller's tensors' or parameters') is followed, to tell whether the graph
        still holds it after a step (Step.held_packs).

        The pack hook keeps a detached tensor: returning an output itself would hold it in a cycle with its
        own grad_fn, which the collector cannot free (unpacking restores the grad_fn either way)."""
        log = self.fired_hooks

        def pack(tensor):
            log.append("pack")
            packed, memory = tensor.detach(), _memory(tensor)  # memory None (empty, meta): nothing to tell by
            if memory is not None and memory not in self._callers_memory():
                self.produced_packs.append(weakref.ref(packed))
            return packed

        def unpack(tensor):
            log.append("unpack")
            return tensor

        return torch.autograd.graph.saved_tensors_hooks(pack, unpack)

    def _callers_memory(self) -> set:
        tensors = [t for t in self.watched.values() if isinstance(t, torch.Tensor)]
        tensors += [p for m in self.watched.values() if isinstance(m, torch.nn.Module) for p in m.parameters()]
        return {_memory(t) for t in tensors} - {None}

    def follow(self, name, tensor):
        """Follow the lifetime of a tensor's memory under a name (a weak reference to its storage: the memory,
        whichever tensor objects, views or saved copies hold it). The first tensor given a name keeps it, so a
        recompute's tensors are not followed. Returns the tensor."""
        if isinstance(tensor, torch.Tensor) and name not in self.followed:
            try:
                self.followed[name] = StorageWeakRef(tensor.untyped_storage())
            except (RuntimeError, NotImplementedError):  # a tensor without storage (a subclass's): not followed
                pass
        return tensor

    def _lifetimes(self) -> tuple[frozenset, frozenset]:
        """(the followed tensors whose memory is alive now, those of them a garbage collection then frees).
        observe() keeps the collector from running by itself and freezes what existed before the program, so
        that this collection is quick and memory held by a reference cycle shows as such here, and only here."""
        alive = frozenset(n for n, ref in self.followed.items() if not ref.expired())
        gc.collect()
        return alive, frozenset(n for n in alive if self.followed[n].expired())

    def end(self):
        """The program has returned: the caller holds nothing of it any more. A last step records which of
        the followed tensors are still alive (in the plain run: none but what a reference cycle holds)."""
        self.watched, self.value = {}, None
        step = Step("the program has returned (the caller holds none of its tensors)")
        self.steps.append(step)
        step.alive, step.collected = self._lifetimes()

    def __call__(self, name, thunk, backward=False):
        step = Step(name, backward, precision=_precision(self.steps[-1].precision if self.steps else None))
        self.steps.append(step)
        fired_before = len(self.fired_hooks)
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
        step.state = process_state(self.hooks_before, self.watched)
        if self.held:  # while the caller holds one of the API's own switches, the module's switches are the caller's
            step.state.pop("checkpoint switches", None)
        step.hooks = tuple(self.fired_hooks[fired_before:])
        if len(self.steps) == 1:  # the forward's outputs, followed from here on
            for path, tensor in _paths(value):
                self.follow(path, tensor)
        step.alive, step.collected = self._lifetimes()
        step.held_packs = sum(ref() is not None for ref in self.produced_packs)
        if step.exception is not None:
            if self.going_on:
                return None
            raise Halt(step.message)
        self.value = value
        return value


def observe(run, api) -> list[Step]:
    """Run the program once through api (PLAIN or an implementation) and return its steps.

    Log records are not observed, and not emitted: torch 2.13's debug mode logs a record whose arguments
    do not match its format, which a handler that raises on bad records (pytest's) turns into an error.

    The garbage collector runs only where the record asks (after each step), over the objects made since
    the program started (what existed before is frozen), so that each collection is quick and a tensor that
    only a reference cycle holds is told from one that is freed when its last reference goes."""
    record = Observation()
    logging_disabled = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    collecting = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        run(api, record)
        record.end()
    except Halt:
        pass
    finally:
        record.release_all()
        logging.disable(logging_disabled)
        gc.unfreeze()
        if collecting:
            gc.enable()
    return record.steps
