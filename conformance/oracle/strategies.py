"""Hypothesis strategies that build programs (conformance/oracle/program.py) for one variant and the
features the implementation claims: the region from the op vocabulary, its arguments, its output, the
options, the contexts around the forward and the backward, and the caller's steps in between."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.oracle.program import (
    BACKWARDS,
    CALLER_STEPS,
    CONTEXTS,
    NESTED_OUTPUTS,
    OPS,
    OUTPUTS,
    RANDOM_OPS,
    SEQUENTIAL_FUNCTIONS,
    INPUT_KINDS,
    Input,
    Nested,
    Program,
)

NON_TENSORS = (None, 2, 0.5, True, "label")
DTYPES = ("float64", "float32", "float64", "bfloat16", "complex128")  # float16 sums reassociated past its tolerance
FORWARD_CONTEXTS = tuple(CONTEXTS)
BACKWARD_CONTEXTS = ("no_grad", "enable_grad", "autocast", "saved_tensors_hooks", "default_device")
NESTABLE_OPS = tuple(op for op in OPS if op not in ("mul_arg", "add_arg", "in_place_add", "scale"))


def ops(names=tuple(OPS)):
    """One op, reading argument / Linear index 0..2."""
    return st.builds(lambda name, i: f"{name}:{i}" if "{x}" in OPS[name] or "{m}" in OPS[name] else name,
                     st.sampled_from(names), st.integers(0, 2))


def nested(variants):
    """A checkpoint inside the region, of a variant the implementation claims (one it does not claim
    would only raise its Unsupported)."""
    reentrant = st.sampled_from(sorted(variants)).map(lambda v: v == "reentrant")
    return st.builds(Nested, reentrant, st.lists(ops(NESTABLE_OPS), min_size=1, max_size=3).map(tuple))


def inputs(variant, features, first_grad=st.booleans(), min_extra=0):
    places = ["positional"] + (["nested"] + ["keyword"] * ("kwargs" in features) if variant == "non_reentrant" else [])
    first = st.builds(Input, first_grad, st.just("positional"))
    rest = st.lists(st.builds(Input, st.booleans(), st.sampled_from(places), st.sampled_from(tuple(INPUT_KINDS))),
                    min_size=min_extra, max_size=2)
    return st.tuples(first, rest).map(lambda fr: (fr[0], *fr[1]))


def options(variant, features):
    """checkpoint's own keywords the variant accepts and the implementation claims, each omitted or set."""
    choices = {}
    if "preserve_rng_state" in features:
        choices["preserve_rng_state"] = st.booleans()
    if variant == "non_reentrant":
        choices.update({"determinism_check": st.sampled_from(["default", "none"]), "early_stop": st.booleans(),
                        "debug": st.booleans(), "context_fn": st.just("noop_contexts")})
        choices = {k: v for k, v in choices.items() if k in features or k == "preserve_rng_state"}
    if not choices:
        return st.just(())
    return st.lists(st.sampled_from(sorted(choices)), unique=True, max_size=3).flatmap(
        lambda names: st.tuples(*[st.tuples(st.just(n), choices[n]) for n in names]))


def contexts(names, max_size=2):
    return st.lists(st.sampled_from(names), unique=True, max_size=max_size).map(tuple)


@st.composite
def programs(draw, variant, claims, *, random=st.booleans(), backward=st.sampled_from(tuple(BACKWARDS)),
             steps=st.lists(st.sampled_from(tuple(CALLER_STEPS)), max_size=2).map(tuple),
             forward_contexts=None, raises=st.sampled_from(["", "", "", "", "forward", "recompute"]), arguments=None):
    """A region program: up to six ops (random ones when random draws True), some nested checkpoints; over
    what the implementation claims (``claims``: its Capabilities)."""
    features = claims.features
    vocabulary = tuple(OPS) if draw(random) else tuple(op for op in OPS if op not in RANDOM_OPS)
    body = draw(st.lists(st.one_of(ops(vocabulary), ops(vocabulary), ops(vocabulary), nested(claims.variants)),
                         min_size=1, max_size=6).map(tuple))
    outputs = tuple(OUTPUTS) if variant == "non_reentrant" else tuple(o for o in OUTPUTS if o not in NESTED_OUTPUTS)
    return Program(
        variant=variant,
        inputs=draw(arguments if arguments is not None else inputs(variant, features)),
        ops=body,
        output=draw(st.sampled_from(outputs)),
        non_tensor=draw(st.sampled_from(NON_TENSORS)),
        non_tensor_first=draw(st.booleans()),
        dtype=draw(st.sampled_from(DTYPES)),
        options=draw(options(variant, features)),
        forward_contexts=draw(forward_contexts if forward_contexts is not None else contexts(FORWARD_CONTEXTS, 1)),
        steps=draw(steps),
        backward=draw(backward),
        backward_contexts=draw(contexts(BACKWARD_CONTEXTS, 1)),
        raises=draw(raises),
        seed=draw(st.integers(0, 2**16)),
    )


@st.composite
def sequential_programs(draw, variant, claims):
    """A checkpoint_sequential program: up to eight functions, any valid segment count."""
    features = claims.features
    functions = draw(st.lists(st.sampled_from(tuple(SEQUENTIAL_FUNCTIONS)), min_size=1, max_size=8).map(tuple))
    keep = {"preserve_rng_state"} & set(features)
    return Program(
        variant=variant,
        inputs=(Input(draw(st.booleans())),),
        sequential=functions,
        segments=draw(st.integers(1, len(functions))),
        dtype=draw(st.sampled_from(["float64", "float32"])),
        options=tuple(o for o in draw(options(variant, features)) if o[0] in keep),
        forward_contexts=draw(contexts(("autocast", "no_grad", "default_device"), 1)),
        steps=draw(st.lists(st.sampled_from(("draw", "reseed", "read")), max_size=2).map(tuple)),
        backward=draw(st.sampled_from(("backward", "backward_twice", "autograd_grad", "backward_inputs"))),
        backward_contexts=draw(contexts(BACKWARD_CONTEXTS, 1)),
        seed=draw(st.integers(0, 2**16)),
    )
