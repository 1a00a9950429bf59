"""The harness's vocabulary, in one place: every other module derives its tables from this one.

- what can happen to a test (*statuses*) and what an expectation can say about it;
- the *levels* of the clauses, and which of them bind an implementation;
- the *verdicts* a report shows, derived from the three, with their symbol, label, meaning and severity;
- the variants and devices a run binds;
- the API surface an implementation offers: required and optional names, ``checkpoint``'s own
  keywords, and the documented ``checkpoint_sequential`` split;
- how a torch release is named (``release_of``), for the registry, the expectations and the report.

Plain data and a few pure functions; it imports nothing of the harness, nor pytest, nor torch.
"""

from __future__ import annotations

from dataclasses import dataclass

# ------------------------------------------------------------------------------ variants, devices

VARIANTS = ("reentrant", "non_reentrant")  # use_reentrant=True, use_reentrant=False
DEVICES = ("cpu", "cuda")

# ----------------------------------------------------------------------------- the run's scratch

# Set by ``python -m conformance run`` in each run process: a folder the supervisor removes when the run
# ends, however its processes ended. A test that leaves files behind on a kill (the distributed area's
# rank logs) makes them there when it is set.
SCRATCH_ENV = "CONFORMANCE_SCRATCH_DIR"

# ---------------------------------------------------------------------------------- the outputs

# The folder (relative to where the command runs; git ignores it, README.md names it) that gets what the harness
# writes unless told otherwise: `run`'s results, `report`'s pages, a plain pytest run's reproducer scripts.
OUTPUT_DIR = "reports"
# Reproducer scripts go into `<results stem>-reproducers/` beside a results file, else OUTPUT_DIR/reproducers/.
REPRODUCERS = "reproducers"

# ----------------------------------------------------------------------------------- statuses

# What happened to one test, whatever anybody expected (wptreport's "status").
STATUSES = (
    "pass",
    "fail",  # the test found the implementation violating its clause
    "error",  # the test could not run (a fixture or setup failure: a harness or adapter problem)
    "skip",  # not applicable here (e.g. CUDA absent); the message says why
    "crash",  # the process died during the test (from `python -m conformance run`)
    "timeout",  # the test did not finish in time (likewise)
    "not_run",  # the test was planned but never started (likewise: the run was stopped first)
)

# What was expected of a test that is not simply expected to pass (wptreport's "expected").
EXPECTED_KINDS = (
    "deviation",  # a known deviation declared in expectations.toml: the test is expected to fail
    "unsupported",  # the implementation does not claim (or provide) what the test needs
)

# ------------------------------------------------------------------------------------- levels

# A clause's level (clauses.toml), strictest first. MUST, SHOULD and MAY state the documented contract;
# OBSERVED records what torch does where the docs are silent, so doing otherwise differs from torch without
# breaking the contract. Only a MUST binds: a failing test of another level is reported with a verdict of
# its own and does not fail a run (unless the run asks for --strict-levels).
LEVELS = ("MUST", "SHOULD", "MAY", "OBSERVED")
DOCUMENTED_LEVELS = ("MUST", "SHOULD", "MAY")
BINDING_LEVEL = "MUST"


def strictest(levels) -> str:
    """The level a test is held to when it checks clauses of these levels: the strictest of them. A level
    this vocabulary does not know (a clause of another harness version) and no level at all count as MUST."""
    levels = list(levels)
    if not levels or any(level not in LEVELS for level in levels):
        return BINDING_LEVEL
    return min(levels, key=LEVELS.index)


# ----------------------------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class Verdict:
    name: str
    symbol: str  # in DejaVu Sans, so it renders without emoji fonts
    label: str
    meaning: str
    conforms: bool | None  # counts for the MUST percentage as conforming (True) / not (False); None: not counted
    progress: str  # one character in pytest's progress line (conformance/plugin/not_binding.py: the verdicts of its own)


# Worst first: a report cell (one clause in one run) shows the worst verdict of its tests.
VERDICTS = {v.name: v for v in (
    Verdict("fail", "✗", "fail", "a test found the implementation violating the clause, and no deviation is declared", False, "F"),
    Verdict("crash", "☠", "crash", "the test process died during a test of the clause", False, "C"),
    Verdict("timeout", "◷", "timeout", "a test of the clause did not finish within the per-test limit", False, "T"),
    Verdict("error", "⚠", "error", "a test could not run (fixture or setup failure: a harness or adapter problem)", False, "E"),
    Verdict("fixed_deviation", "⚑", "fixed?", "a declared deviation did not happen: the test passed (remove the entry from expectations.toml)", True, "P"),
    Verdict("not_run", "○", "not run", "no test of the clause ran here (none selected, or the run was stopped before it)", None, "n"),
    Verdict("should", "△", "SHOULD unmet", "a test of a SHOULD (or MAY) clause failed: the docs recommend the behaviour, they do not require it, so the run does not fail", False, "S"),
    Verdict("differs", "≠", "differs from torch", "a test of an OBSERVED clause failed: the implementation does otherwise than torch where the docs are silent; that is no non-conformance, so the run does not fail", False, "D"),
    Verdict("unsupported", "⊘", "unsupported", "the implementation does not claim or provide what the test needs, and it failed", None, "u"),
    Verdict("expected_deviation", "≈", "deviation", "the test failed as a deviation declared in expectations.toml says it does", False, "x"),
    Verdict("skip", "–", "skipped", "not applicable on this machine (e.g. CUDA absent); the reason is in the tooltip", None, "s"),
    Verdict("unclaimed_pass", "✓", "pass*", "passed although the implementation does not claim the capability the clause needs", None, "X"),
    Verdict("pass", "✓", "pass", "every test of the clause passed", True, "."),
    Verdict("n/a", "·", "n/a", "the clause does not bind this variant", None, " "),
)}
SEVERITY = tuple(VERDICTS)  # worst first
SEVERE = ("fail", "crash", "timeout", "error", "fixed_deviation", "not_run")  # verdicts that make a run exit non-zero
NOT_BINDING = ("should", "differs")  # failures of clauses that do not bind: severe only under --strict-levels
VIOLATIONS = ("fail", *NOT_BINDING)  # the implementation did not do what the clause says, and nothing declared it
# Verdicts whose tests the report spells out (messages, test ids, repro commands): all but pass and n/a.
EXPLAINED = tuple(v for v in VERDICTS if v not in ("pass", "n/a"))


def verdict(status: str, expected: str | None, level: str = BINDING_LEVEL) -> str:
    """The verdict of one test from what happened, what was expected (``None``: to pass) and the level of
    the clause(s) it was charged to.

    Expectations speak of passing and failing only: a crash, a timeout, an error, a skip or a test
    that never ran stays what it is, whatever was declared. An unexpected failure is a ``fail`` only
    where the clause is a MUST: of a SHOULD or MAY it is ``should``, of an OBSERVED one ``differs``.
    """
    if status == "pass":
        return {None: "pass", "deviation": "fixed_deviation", "unsupported": "unclaimed_pass"}[expected]
    if status == "fail":
        unexpected = {"MUST": "fail", "SHOULD": "should", "MAY": "should", "OBSERVED": "differs"}[strictest([level])]
        return {None: unexpected, "deviation": "expected_deviation", "unsupported": "unsupported"}[expected]
    return status


def severe(strict_levels: bool = False) -> tuple[str, ...]:
    """The verdicts that make a run exit non-zero: with ``strict_levels``, failures of any level."""
    return SEVERE + NOT_BINDING if strict_levels else SEVERE


def worst(verdicts) -> str:
    present = set(verdicts)
    return next(v for v in SEVERITY if v in present)


# ------------------------------------------------------------------------------- API surface

REQUIRED_NAMES = ("checkpoint", "checkpoint_sequential")

# Optional parts of the API. A clause lists the ones it needs (clauses.toml, `features`).
FEATURES = {
    "checkpoint_sequential": "checkpoint_sequential(functions, segments, input, ...)",
    "preserve_rng_state": "the preserve_rng_state keyword and RNG stashing",
    "kwargs": "keyword arguments forwarded to the function (non-reentrant)",
    "context_fn": "the context_fn keyword (non-reentrant)",
    "determinism_check": "the determinism_check keyword and CheckpointError (non-reentrant)",
    "debug": "debug=True and set_checkpoint_debug_enabled (non-reentrant)",
    "early_stop": "early stop: the early_stop keyword and set_checkpoint_early_stop (non-reentrant)",
    "selective_checkpointing": "create_selective_checkpoint_contexts / CheckpointPolicy",
    "use_reentrant_warning": "the warning when use_reentrant is not passed",
    "graph_exec_group": "GraphExecGroup",
    "distributed": "runs inside DistributedDataParallel / FSDP on an initialized process group",
}

# Optional module-level names, and the feature each one is part of. A module that lacks one (and
# declares nothing about that feature) is taken not to provide the feature.
OPTIONAL_NAMES = {
    "set_checkpoint_early_stop": "early_stop",
    "set_checkpoint_debug_enabled": "debug",
    "create_selective_checkpoint_contexts": "selective_checkpointing",
    "CheckpointPolicy": "selective_checkpointing",
    "GraphExecGroup": "graph_exec_group",
}
# CheckpointError is optional too, but no feature needs it: without it the contract's error is
# its documented base, RuntimeError.
CHECKPOINT_ERROR_FALLBACK = RuntimeError

# The keywords checkpoint() consumes itself (torch 2.13 docstring); any other keyword goes to the
# function (non-reentrant variant).
CHECKPOINT_KEYWORDS = ("use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug", "early_stop")
OWN_KEYWORDS = CHECKPOINT_KEYWORDS[1:]  # those an adapter or wrapper passes on besides use_reentrant


# ------------------------------------------------------------------------------------- the oracle

# What the oracle (conformance/oracle/) compares between a program's checkpointed and plain runs, step by
# step (conformance/oracle/observe.py names them the same way).
ORACLE_OBSERVABLES = {
    "exception": "whether the step raises (one run raises, the other does not)",
    "exception-type": "the exception's type, where both runs raise (a clause relaxing exception relaxes this too)",
    "warnings": "the warnings the step emits, and which speak of use_reentrant (not their category: the docs name none)",
    "result": "what the step returns: structure, container types, dtypes, devices, shapes, values",
    "requires-grad": "requires_grad of each tensor the step returns",
    "aliasing": "which returned tensors share memory with each other or with the caller's tensors",
    "gradient-presence": "which leaves have a gradient (None or not)",
    "zero-gradient-for-none": "a leaf has an all-zero gradient where the plain run leaves None",
    "gradients": "the gradients' values (and what autograd.grad returns)",
    "objects": "the caller's tensors and parameters after the step: values, requires_grad, leaf-ness, strides",
    "rng": "torch's RNG streams after the step: the global one, and each generator the program watches",
    "state": "every global setting torch's getters read (derived), autocast per device type, saved-tensor hooks, "
             "Python's and NumPy's global generators, the checkpoint module's switches",
    "hooks": "the program's module hooks (forward pre-, forward, full backward) and tensor hooks: which fire, how often, "
    "in what order (a difference that is not one of the two below)",
    "hooks-rerun": "a backward fires the plain backward's hooks, and besides them stretches of a forward's firings "
    "again, in its order, each from its start or a module's entry on (a recompute)",
    "hooks-rerun-in-forward": "the same in a step that is not a backward (a recompute inside the forward)",
    "saved-tensor-hooks": "after the step, the graph still holds a tensor produced inside the region that the "
    "caller's saved_tensors_hooks around the forward packed",
    "lifetimes": "a tensor of the program (argument, named intermediate, output) still alive after the step and a "
    "garbage collection, where the plain run has freed it",
    "reference-cycles": "a tensor of the program freed only by the garbage collector (a reference cycle held it), "
    "where the plain run freed it when its last reference went",
}

# The conditions under which a clause may relax an observable (clauses.toml, `relaxes`); each is a
# predicate of a program, in conformance/oracle/allowances.py.
ORACLE_CONDITIONS = {
    "reentrant-input-without-grad": "a reentrant checkpoint (outer or nested) gets no tensor input that requires grad",
    "reentrant-nested-tensors": "the reentrant region gets or returns tensors inside lists, dicts or other containers "
    "(a checkpointed segment of checkpoint_sequential given a tuple among them)",
    "reentrant-closed-over-non-leaf": "the reentrant region uses a tensor bound in a partial that requires grad and is not a leaf",
    "reentrant-default-device": "a reentrant checkpoint runs under a default device set by the caller (meta)",
    "random-without-preserve-autograd-inside": "random ops, preserve_rng_state=False, and autograd inside the region, "
    "whose backward in the forward may read recomputed values",
    "full-recompute-inside-forward": "autograd inside the region with early_stop=False (or set_checkpoint_early_stop(False) "
    "held): the whole function is recomputed inside the forward",
    "suppressed-forward-error": "the region raises in the forward under a context_fn whose forward manager swallows it",
    "reentrant-autograd-grad": "the program has a reentrant checkpoint and differentiates with torch.autograd.grad",
    "reentrant-backward-inputs": "the program has a reentrant checkpoint and calls backward(inputs=...)",
    "random-without-preserve": "the region draws random numbers and preserve_rng_state=False",
    "fails-when-run-again": "the region raises when it runs a second time (the recompute), until the caller turns "
    "the fault off",
    "changed-between-passes": "the caller changes an input or an output in place between forward and backward",
    "debug-with-context-fn": "debug=True (or set_checkpoint_debug_enabled(True) held) together with a context_fn",
    "reentrant": "the program's checkpoint is reentrant",
    "reentrant-plain-output-without-grad": "reentrant, and no output of the plain run's forward requires grad",
    "reentrant-backward-through-some-outputs": "reentrant, and a backward through some of the outputs only",
    "reentrant-hook-fails-through-some-outputs": "reentrant, a backward through some of the outputs only, and a "
    "tensor hook the region registers raises",
    "reentrant-closed-over-first-input": "the reentrant region uses, bound in a partial, the first input itself or a "
    "tensor made from it, which requires grad (the first input is also an argument)",
    "module-hooks": "the program registers forward pre-hooks and forward hooks on the modules it runs",
    "module-hooks-autograd-inside": "the same, and the region runs autograd inside itself (which may recompute it "
    "during the forward)",
}


def sequential_segments(count: int, segments: int) -> list[tuple[int, int]]:
    """The documented ``checkpoint_sequential`` split of ``count`` functions: the (start, stop) of
    each checkpointed chunk, ``count // segments`` functions each, ``segments - 1`` of them. The
    last segment (the rest) runs without checkpointing, since its activations are needed at once.
    ``range`` refuses a zero step: more segments than functions is an error, not a silent no-op."""
    size = count // segments
    return [(start, start + size) for start in range(0, size * (segments - 1), size)]


def release_of(version: str) -> str:
    """A torch release as the registry's ``since`` and the expectations' ``torch`` name it: ``"2.6.0+cpu"`` -> ``"2.6"``."""
    return ".".join(str(version).split("+")[0].split(".")[:2])
