"""Compare two observations of a program (observe.py), step by step: the differences a user would see between the
checkpointed run and the plain one, most telling first. Embedded in reproducer scripts after observe.py."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from conformance.oracle.observe import Step, TensorSummary



# ---------------------------------------------------------------------------------------- compare

@dataclass(frozen=True)
class Difference:
    step: int
    name: str  # the step's name
    observable: str  # one of OBSERVABLES
    detail: str

    def __str__(self):
        return f"step {self.step} ({self.name}): {self.observable}: {self.detail}"


# What the comparison can find different, in the order it looks.
OBSERVABLES = ("exception", "exception-type", "warnings", "result", "requires-grad", "aliasing", "gradient-presence",
               "zero-gradient-for-none", "gradients",
               "objects", "rng", "state",
               "hooks", "hooks-rerun", "hooks-rerun-in-forward", "saved-tensor-hooks", "lifetimes", "reference-cycles")


# How telling each observable is to a person reading a reproducer: the values and gradients the caller computes
# first, then what else the caller's code sees, then the process state, hooks and lifetimes.
TELLING = ("result", "gradients", "gradient-presence", "zero-gradient-for-none", "requires-grad", "aliasing",
           "exception", "exception-type", "objects", "warnings", "rng", "state",
           "hooks", "hooks-rerun", "hooks-rerun-in-forward", "saved-tensor-hooks", "lifetimes", "reference-cycles")
assert sorted(TELLING) == sorted(OBSERVABLES)


def most_telling_first(differences):
    """The differences, values and gradients before process state, each kind in step order."""
    return sorted(differences, key=lambda d: (TELLING.index(d.observable), d.step))


def _close(a, b, precision=None) -> str | None:
    """Why two tensor values differ (None: close), with torch.testing's defaults for their dtype, or for the
    precision they were computed in where that is lower."""
    tolerance = {}
    if precision is not None and a.is_floating_point() and torch.finfo(precision).eps > torch.finfo(a.dtype).eps:
        tolerance = dict(rtol={torch.float16: 1e-3, torch.bfloat16: 1.6e-2}[precision], atol=1e-5)
    try:
        torch.testing.assert_close(a, b, equal_nan=True, check_device=False, **tolerance)
    except AssertionError as exc:
        return str(exc).strip().splitlines()[0] + " " + " ".join(str(exc).split("\n")[1:4])
    return None


def _compare_values(actual, expected, where, out, precision=None):
    """Differences of two summaries, split into requires-grad and result (the rest)."""
    if isinstance(expected, TensorSummary) and isinstance(actual, TensorSummary):
        if (actual.dtype, actual.device, actual.shape) != (expected.dtype, expected.device, expected.shape):
            out.append(("result", f"{where}: {actual!r}, the plain run gives {expected!r}"))
            return
        if actual.requires_grad != expected.requires_grad:
            out.append(("requires-grad", f"{where}: requires_grad={actual.requires_grad}, the plain run's {expected.requires_grad}"))
        why = _close(actual.value, expected.value, precision)
        if why:
            out.append(("result", f"{where}: values differ: {why}"))
    elif isinstance(expected, tuple) and isinstance(actual, tuple) and len(expected) == 2 and len(actual) == 2 \
            and expected[0] == actual[0] and len(expected[1]) == len(actual[1]):
        items = expected[1].items() if isinstance(expected[1], dict) else enumerate(expected[1])
        if isinstance(expected[1], dict) and list(expected[1]) != list(actual[1]):
            out.append(("result", f"{where}: keys {list(actual[1])}, the plain run's {list(expected[1])}"))
            return
        for key, e in items:
            _compare_values(actual[1][key], e, f"{where}[{key!r}]", out, precision)
    elif type(actual) is not type(expected) or actual != expected:
        out.append(("result", f"{where}: {_shape_of(actual)}, the plain run gives {_shape_of(expected)}"))


def _shape_of(summary) -> str:
    if isinstance(summary, tuple) and len(summary) == 2 and isinstance(summary[0], str):
        return f"a {summary[0]} of {len(summary[1])}"
    return repr(summary)


def _compare_gradients(actual, expected, out, precision=None):
    for name in expected.keys() | actual.keys():
        a, e = actual.get(name), expected.get(name)
        if e is None and a is not None and not a.any():
            out.append(("zero-gradient-for-none", f"{name}: a zero gradient, the plain run gives None"))
        elif (a is None) != (e is None):
            out.append(("gradient-presence", f"{name}: {'None' if a is None else 'a gradient'}, the plain run gives "
                                             f"{'None' if e is None else 'a gradient'}"))
        elif a is not None:
            why = _close(a, e, precision)
            if why:
                out.append(("gradients", f"{name}: {why}"))


def _compare_state(actual, expected, out):
    """torch's RNG streams are "rng" (rng.stream-restored's); the rest is "state", Python's and NumPy's
    generators included: the docs' RNG note speaks of torch's RNG state only, and the programs' regions never
    draw from those, so a change there is global state the checkpoint left behind."""
    for key, e in expected.items():
        a = actual.get(key)
        if isinstance(e, torch.Tensor):
            if a is None or not torch.equal(a, e):
                stream = "the global RNG stream" if key == "rng" else f"the RNG stream of {key}"
                out.append(("rng", f"{stream} differs from the plain run's (a draw now gives other numbers)"))
        elif a != e:
            out.append(("state", f"{key}: {_difference(a, e)}"))


def _difference(actual, expected) -> str:
    """A state as it reads now and in the plain run: of a mapping (as _comparable writes one) only the
    entries that differ; a long value only named."""
    if _is_mapping(actual) and _is_mapping(expected):
        a, e = dict(actual), dict(expected)
        changed = sorted(k for k in a.keys() | e.keys() if a.get(k) != e.get(k))
        actual, expected = {k: a.get(k) for k in changed}, {k: e.get(k) for k in changed}
    shown = f"{actual!r}, the plain run leaves {expected!r}"
    return shown if len(shown) < 300 else "not as the plain run leaves it"


def _is_mapping(value) -> bool:
    return isinstance(value, tuple) and all(isinstance(i, tuple) and len(i) == 2 and isinstance(i[0], str) for i in value)


def compare_step(actual: Step, expected: Step, forwards=()) -> list[tuple[str, str]]:
    """(observable, detail) for everything that differs at one step (forwards: the module and tensor hook
    firings of each of the plain run's steps so far that are not a backward, which a recompute may repeat)."""
    out = []
    if actual.exception is not expected.exception and not (
            actual.exception and expected.exception and issubclass(actual.exception, expected.exception)):
        both = actual.exception is not None and expected.exception is not None
        out.append(("exception-type" if both else "exception", f"raises {actual.message or 'nothing'}; the plain run {expected.message or 'raises nothing'}"))
    if actual.warnings != expected.warnings:
        out.append(("warnings", f"warns {list(actual.warnings)}; the plain run {list(expected.warnings)}"))
    results = []
    _compare_values(actual.result, expected.result, "result", results, expected.precision)
    out += [("gradients" if expected.backward and o == "result" else o, d) for o, d in results]
    if actual.aliases != expected.aliases:  # a backward's result is gradients: which of them share memory is theirs
        out.append(("gradients" if expected.backward else "aliasing",
                    f"shares memory {sorted(actual.aliases)}; the plain run {sorted(expected.aliases)}"))
    _compare_gradients(actual.gradients, expected.gradients, out, expected.precision)
    for name, e in expected.objects.items():
        inner = []
        _compare_values(actual.objects.get(name), e, name, inner)
        out += [("objects", f"the caller's {detail}") for _, detail in inner]
    _compare_state(actual.state, expected.state, out)
    _compare_hooks(actual, expected, forwards, out)
    _compare_lifetimes(actual, expected, out)
    return out


def compare(actual: list[Step], expected: list[Step]) -> list[Difference]:
    """Every difference, step by step, until either run stops."""
    found, forwards = [], []
    for i, (a, e) in enumerate(zip(actual, expected)):
        if not e.backward:
            forwards.append(_module_and_tensor_hooks(e.hooks))
        found += [Difference(i, e.name, observable, detail) for observable, detail in compare_step(a, e, forwards)]
    return found


# ------------------------------------------------------------------ hooks and lifetimes (issue 35, items 2, 3)

def _module_and_tensor_hooks(labels) -> list[str]:
    """The firings of the module and tensor hooks (the saved-tensor hooks' are counted apart)."""
    return [label for label in labels if label not in ("pack", "unpack")]


def reruns(fired, plain, forwards) -> bool:
    """Whether fired is plain with stretches of the forwards' firings inserted, each a run of consecutive
    firings of one forward from its start or a module's entry (a pre: label) on: what a recompute that runs a
    region, or its start, again adds (the hooks its modules fire, and those autograd inside it fires)."""
    entries = [(forward, i) for forward in forwards for i, label in enumerate(forward)
               if i == 0 or label.startswith("pre:")]
    seen, todo = {(0, 0)}, [(0, 0)]  # (firings of fired matched, of plain matched)
    while todo:
        i, j = todo.pop()
        if (i, j) == (len(fired), len(plain)):
            return True
        following = [(i + 1, j + 1)] if i < len(fired) and j < len(plain) and fired[i] == plain[j] else []
        for forward, start in entries:
            length = 0
            while start + length < len(forward) and i + length < len(fired) and forward[start + length] == fired[i + length]:
                length += 1
                following.append((i + length, j))
        todo += [s for s in following if s not in seen]
        seen.update(following)
    return False


def _shown(labels) -> str:
    text = ", ".join(labels) or "none"
    return text if len(text) < 240 else text[:240] + " ..."


def _compare_hooks(actual: Step, expected: Step, forwards, out):
    """The module and tensor hooks fire as in the plain run, but for stretches of the forwards' firings again
    (hooks-rerun, hooks-rerun-in-forward: a recompute); the graph keeps no tensor produced inside the region
    that the caller's saved-tensor hooks packed (the graph keeps the passed tensors only)."""
    fired, plain = _module_and_tensor_hooks(actual.hooks), _module_and_tensor_hooks(expected.hooks)
    # A step the plain run fails: the hooks that fire before the error depend on when it is raised, which a
    # checkpoint moves (an error of the recomputed region comes after the recompute): not compared.
    if fired != plain and expected.exception is None:
        rerun = reruns(fired, plain, forwards)
        observable = ("hooks-rerun" if expected.backward else "hooks-rerun-in-forward") if rerun else "hooks"
        out.append((observable, f"fires {_shown(fired)}; the plain run {_shown(plain)}"))
    if actual.held_packs:
        out.append(("saved-tensor-hooks", f"the graph holds {actual.held_packs} tensor(s) produced inside the region "
                                          f"that the caller's saved_tensors_hooks packed (the plain run "
                                          f"{expected.held_packs}); packs {actual.hooks.count('pack')}, unpacks "
                                          f"{actual.hooks.count('unpack')} (the plain run {expected.hooks.count('pack')}, "
                                          f"{expected.hooks.count('unpack')})"))


def _compare_lifetimes(actual: Step, expected: Step, out):
    """No tensor of the program outlives the plain run's (checkpointing frees more, never less), and none
    waits for the garbage collector where the plain run freed it at once."""
    kept = (actual.alive - actual.collected) - (expected.alive - expected.collected)
    if kept:
        out.append(("lifetimes", f"{', '.join(sorted(kept))} still alive after a garbage collection; the plain run "
                                 f"has freed {'it' if len(kept) == 1 else 'them'}"))
    cycles = actual.collected - expected.alive
    if cycles:
        out.append(("reference-cycles", f"{', '.join(sorted(cycles))} freed only by the garbage collector (a reference "
                                        f"cycle held {'it' if len(cycles) == 1 else 'them'}); the plain run freed "
                                        f"{'it' if len(cycles) == 1 else 'them'} when the last reference went"))
