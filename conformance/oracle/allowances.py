"""Which differences between a program's checkpointed and plain runs the contract allows, and which
clause a difference that it does not allow violates.

The allowed ones are declared in the registry: a clause's ``relaxes`` lists (observable, condition)
pairs, and CONDITIONS here says what each condition means for a program. Nothing else is excused.
"""

from __future__ import annotations

from conformance.oracle.compare import Difference
from conformance.oracle.observe import TensorSummary
from conformance.oracle.program import ARG_OPS, HEALTHY_STEPS, META_CONTEXTS, NO_GRAD_SOURCE_OPS, OBJECT, Nested, Program
from conformance.data.registry import load_clauses
from conformance.data.vocabulary import ORACLE_CONDITIONS

def summaries_in(summary):
    """The TensorSummary leaves of a summarized value."""
    if isinstance(summary, TensorSummary):
        return [summary]
    if isinstance(summary, tuple) and len(summary) == 2 and isinstance(summary[1], (list, dict)):
        items = summary[1].values() if isinstance(summary[1], dict) else summary[1]
        return [t for item in items for t in summaries_in(item)]
    return []


GRAD_SOURCES = ("linear", "functional_linear", "layer_norm")  # ops whose parameters make h require grad
PARTIAL_BACKWARDS = ("backward_one_output", "backward_subsets", "backward_gradient")  # a loss over some outputs only


def _reentrant_without_grad_input(p: Program) -> bool:
    if p.sequential:
        return p.reentrant and not (p.inputs[0].requires_grad and not {"no_grad", "inference_mode"} & set(p.forward_contexts))
    grad_mode = not {"no_grad", "inference_mode"} & set(p.forward_contexts)
    positional = [p.requires_grad(n) for n, i in enumerate(p.inputs) if i.place == "positional"]
    if p.reentrant and not (grad_mode and any(positional)):
        return True
    # Nested reentrant checkpoints: the outer reentrant forward runs under no_grad; else follow h.
    h = grad_mode and p.inputs[0].requires_grad and not p.reentrant
    for op in p.ops:
        if isinstance(op, Nested):
            if op.reentrant and not h:
                return True
            h = h or (grad_mode and not p.reentrant and any(o.split(":")[0] in GRAD_SOURCES for o in op.ops))
            continue
        name, _, index = op.partition(":")
        source = p.requires_grad(int(index or 0) % len(p.inputs)) if name in ARG_OPS else name in GRAD_SOURCES
        h = h or (grad_mode and not p.reentrant and source)
    return False


def _has_reentrant(p: Program) -> bool:
    return p.reentrant or any(isinstance(op, Nested) and op.reentrant for op in p.ops)


CONDITIONS = {
    "reentrant-input-without-grad": _reentrant_without_grad_input,
    "reentrant-nested-tensors": lambda p: p.reentrant and (
        any(i.place not in ("positional", "bound") for i in p.inputs) or p.output in ("list", "dict")
        or p.tuple_enters_a_segment),
    "reentrant-autograd-grad": lambda p: _has_reentrant(p) and p.backward in ("autograd_grad", "double_backward"),
    "reentrant-backward-inputs": lambda p: _has_reentrant(p) and p.backward == "backward_inputs",
    "random-without-preserve": lambda p: p.random and p.option.get("preserve_rng_state") is False,
    "fails-when-run-again": lambda p: p.raises == "recompute",
    "changed-between-passes": lambda p: bool({"change_input", "change_output"} & set(p.steps)),
    "reentrant-closed-over-non-leaf": lambda p: p.reentrant and any(
        i.place == "bound" and i.kind in ("view-of-first", "computed-from-first") and p.requires_grad(n)
        for n, i in enumerate(p.inputs)),
    "reentrant-default-device": lambda p: _has_reentrant(p) and bool(set(META_CONTEXTS) & set(p.forward_contexts)),
    "random-without-preserve-autograd-inside": lambda p: p.random and p.option.get("preserve_rng_state") is False
    and p.autograd_inside,
    "full-recompute-inside-forward": lambda p: p.early_stop_off and p.autograd_inside,
    "suppressed-forward-error": lambda p: p.raises == "forward" and p.option.get("context_fn") == "suppressing_contexts",
    "debug-with-context-fn": lambda p: (p.option.get("debug") is True or True in p.switch_values("debug"))
    and "context_fn" in p.option,
    "reentrant": lambda p: p.reentrant,
    "reentrant-plain-output-without-grad": lambda p, plain: p.reentrant and bool(plain) and not any(
        t.requires_grad for t in summaries_in(plain[0].result)),
    "reentrant-backward-through-some-outputs": lambda p: p.reentrant and p.backward in PARTIAL_BACKWARDS,
    "reentrant-hook-fails-through-some-outputs": lambda p: p.reentrant and p.backward in PARTIAL_BACKWARDS
    and p.raises == "backward-hook",
    "reentrant-closed-over-first-input": lambda p: p.reentrant and any(
        i.place == "bound" and i.kind in ("same-as-first", "view-of-first", "computed-from-first") and p.requires_grad(n)
        for n, i in enumerate(p.inputs)),
    "module-hooks": lambda p: p.hooks,
    "module-hooks-autograd-inside": lambda p: p.hooks and p.autograd_inside,
}
READS_THE_PLAIN_RUN = {"reentrant-plain-output-without-grad"}  # conditions of (program, plain run's steps)
# Conditions of the region's fault: they no longer hold from the moment the caller turns it off (HEALTHY_STEPS).
OF_THE_FAULT = {"fails-when-run-again", "suppressed-forward-error", "reentrant-hook-fails-through-some-outputs"}
assert set(CONDITIONS) == set(ORACLE_CONDITIONS), "conditions and their vocabulary must name the same"


def holds(condition: str, program: Program, plain) -> bool:
    test = CONDITIONS[condition]
    return test(program, plain) if condition in READS_THE_PLAIN_RUN else test(program)


def relaxing_clauses(difference: Difference, program: Program, plain) -> list[str]:
    """The clauses whose declared relaxations allow this difference in this program (plain: its plain run's steps)."""
    observables = {difference.observable, *["exception"] * (difference.observable == "exception-type")}
    fault_off = difference.name in HEALTHY_STEPS
    return [c.id for c in load_clauses().values()
            if any(o in observables and holds(w, program, plain) and not (fault_off and w in OF_THE_FAULT)
                   for o, w in c.relaxes)]


# ---------------------------------------------------------------------------------------- charging

def _gradient_clause(p: Program) -> list[str]:
    """Most specific first: the clause whose sentence speaks of this program's gradients."""
    contexts, steps = set(p.forward_contexts), set(p.steps)
    grad_inputs = [i for n, i in enumerate(p.inputs) if p.requires_grad(n)]
    ops = p.op_names
    inner_autograd = p.autograd_inside
    return [
        *["contextfn.default-device-replayed"] * ("default_device_branch" in ops and bool(set(META_CONTEXTS) & contexts)),
        *["gradmode.inner-backward-full-recompute"] * (inner_autograd and p.early_stop_off),
        *["gradmode.non-reentrant-records-graph"] * inner_autograd,
        *["rng.draws-between-passes"] * (p.random and bool(steps & {"draw", "reseed"})),
        *["rng.same-gradients"] * p.random,
        *["autocast.recompute-under-forward-state"] * _autocast(contexts),
        *["autocast.backward-state-ignored"] * _autocast(p.backward_contexts),
        *["gradmode.recompute-grad-enabled"] * ("no_grad" in p.backward_contexts),
        *["gradapi.non-reentrant-grad"] * (p.backward == "autograd_grad"),
        *["gradapi.non-reentrant-backward-inputs"] * (p.backward == "backward_inputs"),
        *["retain.repeated-backward"] * (p.backward == "backward_twice"),
        *["retain.double-backward"] * (p.backward == "double_backward"),
        *["outputs.backward-through-one"] * (p.backward in ("backward_one_output", "backward_subsets")),
        *["retain.repeated-backward"] * (p.backward == "backward_subsets"),
        *["outputs.gradient-argument"] * (p.backward == "backward_gradient"),
        *["sequential.tuple-passed-whole"] * p.hands_on_tuples,
        *["sequential.same-results"] * bool(p.sequential),
        *["nested.non-reentrant-participates"] * any(i.place in ("nested", "deep") for i in grad_inputs),
        *["kwargs.non-reentrant-forwarded"] * any(i.place == "keyword" for i in grad_inputs),
        *["reqgrad.non-reentrant-gradients"] * (not any(i.place == "positional" for i in grad_inputs)),
        *["nesting.correct-gradients"] * any(isinstance(op, Nested) for op in p.ops),
        *["detached.non-reentrant-supported"] * bool(ops & set(NO_GRAD_SOURCE_OPS)),
        *["nontensor.arguments-pass-through"] * ("scale" in ops or _reads_object(p, ops)),
        "api.same-gradients",
    ]


def _autocast(contexts) -> bool:
    return bool({"autocast", "autocast_float16"} & set(contexts))


def _reads_object(p: Program, ops) -> bool:
    return p.non_tensor == OBJECT and "object_identity" in ops


def _forward_clause(p: Program) -> list[str]:
    contexts = set(p.forward_contexts)
    return [
        *["gradmode.non-reentrant-records-graph"] * p.autograd_inside,
        *["callers.no-grad"] * ("no_grad" in contexts),
        *["callers.inference-mode"] * ("inference_mode" in contexts),
        *["rng.same-forward"] * p.random,
        *["sequential.tuple-passed-whole"] * p.hands_on_tuples,
        *["sequential.same-results"] * bool(p.sequential),
        *["nontensor.outputs-unchanged"] * (p.output == "with-non-tensors"),
        *["nesting.correct-gradients"] * any(isinstance(op, Nested) for op in p.ops),
        *["autocast.recompute-under-forward-state"] * _autocast(contexts),
        "api.forward-value",
    ]


def candidates(d: Difference, p: Program) -> list[str]:
    """The clauses this difference may be charged to, most specific first."""
    forward = d.step == 0 or d.name.startswith("forward")  # the forward's steps (one per region)
    if d.name in HEALTHY_STEPS and d.observable != "warnings":
        return ["exceptions.no-leftover-state"]  # the same call as the first, after a fault: what the fault left
    if d.observable in ("exception", "exception-type"):
        if p.raises == "forward" and forward:
            suppressing = p.option.get("context_fn") == "suppressing_contexts"
            return ["contextfn.suppressed-forward-error"] * suppressing + ["exceptions.forward-propagates"]
        if p.raises == "recompute":
            return ["exceptions.recompute-propagates"]
        if p.raises == "backward-hook" and not forward:
            return ["exceptions.backward-hook-propagates"]
        return _forward_clause(p) if forward else _gradient_clause(p)
    if d.observable == "warnings":
        return ["warnings.explicit-use-reentrant-silent" if "use_reentrant" in d.detail else "warnings.no-warnings-of-its-own"]
    if d.observable in ("result", "requires-grad"):
        if forward:
            return _forward_clause(p)
        return ["rng.stream-restored"] if d.name == "draw random numbers" else ["api.forward-value"]
    if d.observable == "aliasing":
        return ["outputs.views-of-inputs"]
    if d.observable in ("gradients", "gradient-presence", "zero-gradient-for-none"):
        return _gradient_clause(p)
    if d.observable == "objects":
        # the keywords a region taking **extra was given: checkpoint's own options must never be among them
        if d.detail.startswith("the caller's keywords_seen"):
            return ["kwargs.own-keywords-consumed", "kwargs.non-reentrant-options-consumed"]
        return ["inputs.unchanged"]
    if d.observable == "rng":
        return ["exceptions.no-leftover-state"] * bool(p.raises) + ["rng.stream-restored"]
    if d.observable in ("hooks", "hooks-rerun", "hooks-rerun-in-forward"):
        return ["recompute.hooks-as-without-checkpoint"]
    if d.observable == "saved-tensor-hooks":
        return ["memory.only-inputs-saved"]
    if d.observable == "lifetimes":
        return ["memory.intermediates-freed"]
    if d.observable == "reference-cycles":
        return ["memory.freed-without-collector"]
    # "state": torch's settings, autocast, hooks, the checkpoint switches, and Python's and NumPy's generators (the
    # docs' RNG note speaks of torch's RNG only; the regions never draw from those: left changed, they are leftovers)
    return ["exceptions.no-leftover-state"]


def charged_clause(d: Difference, p: Program) -> str:
    """The one clause a difference violates: the most specific that binds the program's variant."""
    clauses = load_clauses()
    return next(c for c in candidates(d, p) if p.variant in clauses[c].variants)
