"""Hypothesis strategies that build programs (conformance/oracle/program.py) for one variant and the
features the implementation claims: the region from the op vocabulary, its arguments, its output, the
options, the contexts around the forward and the backward, and the caller's steps in between."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.oracle.program import (
    BACKWARDS,
    CALLER_STEPS,
    COMPLEX_OPS,
    CONTEXT_FNS,
    CONTEXTS,
    FORMS,
    INNER_AUTOGRAD_OPS,
    INPUT_KINDS,
    META_CONTEXTS,
    NON_REENTRANT_OUTPUTS,
    OBJECT,
    OPS,
    OUTPUTS,
    RANDOM_OPS,
    SEQUENTIAL_FUNCTIONS,
    SWITCHES,
    Input,
    Nested,
    Program,
    allowed_exit_orders,
)

NON_TENSORS = (None, 2, 0.5, True, "label", OBJECT)
# float16 sums reassociate past its tolerance; float32 twice: CPU autocast casts float32 only
DTYPES = ("float64", "float32", "float32", "bfloat16", "complex128")
FORWARD_CONTEXTS = tuple(CONTEXTS)
BACKWARD_CONTEXTS = ("no_grad", "enable_grad", "autocast", "autocast_float16", "saved_tensors_hooks", "default_device")
FACTORY_OPS = ("randperm", "randint", "multinomial")  # ops that make a tensor on the default device
# A flag most programs leave off (the program's hooks, its named intermediates): a quarter of them set it.
SOMETIMES = st.sampled_from((False, False, False, True))
NESTABLE_OPS = tuple(op for op in OPS if op not in ("mul_arg", "add_arg", "in_place_add", "scale", *INNER_AUTOGRAD_OPS))


def ops(names=tuple(OPS)):
    """One op, reading argument / Linear index 0..2."""
    return st.builds(lambda name, i: f"{name}:{i}" if "{x}" in OPS[name] or "{m}" in OPS[name] else name,
                     st.sampled_from(names), st.integers(0, 2))


def nested(variants, vocabulary=NESTABLE_OPS):
    """A checkpoint inside the region, of a variant the implementation claims (one it does not claim
    would only raise its Unsupported)."""
    reentrant = st.sampled_from(sorted(variants)).map(lambda v: v == "reentrant")
    names = tuple(op for op in NESTABLE_OPS if op in vocabulary)
    return st.builds(Nested, reentrant, st.lists(ops(names), min_size=1, max_size=3).map(tuple))


def inputs(variant, features, first_grad=st.booleans(), min_extra=0, max_extra=2):
    places = ["positional", "bound"] + (["nested", "deep"] + ["keyword"] * ("kwargs" in features)
                                        if variant == "non_reentrant" else [])
    first = st.builds(Input, first_grad, st.just("positional"))
    rest = st.lists(st.builds(Input, st.booleans(), st.sampled_from(places), st.sampled_from(tuple(INPUT_KINDS))),
                    min_size=min_extra, max_size=max_extra)
    return st.tuples(first, rest).map(lambda fr: (fr[0], *fr[1]))


def options(variant, features, min_size=0, debug=False):
    """checkpoint's own keywords the variant accepts and the implementation claims, each omitted or set.

    debug=True only with ``debug``: one test draws it (test_oracle.py, the options), because torch 2.13 fails
    a region's second recompute under it, which every implementation built on torch's inherits and which would
    hide what else the other tests find (expectations.toml)."""
    choices = {}
    if "preserve_rng_state" in features:
        choices["preserve_rng_state"] = st.booleans()
    if variant == "non_reentrant":
        choices.update({"determinism_check": st.sampled_from(["default", "none"]), "early_stop": st.booleans(),
                        "debug": st.booleans() if debug else st.just(False), "context_fn": st.sampled_from(CONTEXT_FNS)})
        choices = {k: v for k, v in choices.items() if k in features or k == "preserve_rng_state"}
    if not choices:
        return st.just(())
    return st.lists(st.sampled_from(sorted(choices)), unique=True, min_size=min(min_size, len(choices)), max_size=3).flatmap(
        lambda names: st.tuples(*[st.tuples(st.just(n), choices[n]) for n in names]))


def contexts(names, max_size=2):
    return st.lists(st.sampled_from(names), unique=True, max_size=max_size).map(tuple)


@st.composite
def programs(draw, variant, claims, *, random=st.booleans(), backward=st.sampled_from(tuple(BACKWARDS)),
             steps=st.lists(st.sampled_from(tuple(CALLER_STEPS)), max_size=2).map(tuple),
             forward_contexts=None, raises=st.sampled_from(["", "", "", "", "forward", "recompute", "backward-hook"]), arguments=None,
             dtypes=st.sampled_from(DTYPES), inside=st.just(()), checkpoint_options=None, hooks=SOMETIMES,
             follow_intermediates=SOMETIMES, again=st.booleans(), regions=st.just(1),
             switches=st.just(((), ())), threads=st.just(False), output=None, eval_mode=None):
    """A region program: up to six ops (random ones when random draws True), some nested checkpoints, and the
    ops ``inside`` draws after them; over what the implementation claims (``claims``: its Capabilities)."""
    features = claims.features
    dtype = draw(dtypes)
    vocabulary = tuple(OPS) if draw(random) else tuple(op for op in OPS if op not in RANDOM_OPS)
    if dtype.startswith("complex"):
        vocabulary = tuple(op for op in vocabulary if op in COMPLEX_OPS)
    around = draw(forward_contexts if forward_contexts is not None else contexts(FORWARD_CONTEXTS, 1))
    if set(META_CONTEXTS) & set(around):
        # a factory call without a device makes a meta tensor, whose values (indices, masks) are undefined
        vocabulary = tuple(op for op in vocabulary if op not in FACTORY_OPS)
    if variant == "reentrant":  # its forward records no graph (documented): autograd inside has nothing to use
        vocabulary = tuple(op for op in vocabulary if op not in INNER_AUTOGRAD_OPS)
    body = draw(st.lists(st.one_of(ops(vocabulary), ops(vocabulary), ops(vocabulary), nested(claims.variants, vocabulary)),
                         min_size=1, max_size=6).map(tuple)) + draw(inside)
    outputs = tuple(OUTPUTS) if variant == "non_reentrant" else tuple(o for o in OUTPUTS if o not in NON_REENTRANT_OUTPUTS)
    return Program(
        variant=variant,
        inputs=draw(arguments if arguments is not None else inputs(variant, features)),
        ops=body,
        output=draw(output if output is not None else st.sampled_from(outputs)),
        non_tensor=draw(st.sampled_from(NON_TENSORS)),
        non_tensor_first=draw(st.booleans()),
        dtype=dtype,
        options=draw(checkpoint_options if checkpoint_options is not None else options(variant, features)),
        forward_contexts=around,
        steps=draw(steps),
        backward=draw(backward),
        backward_contexts=draw(contexts(BACKWARD_CONTEXTS, 1)),
        raises=draw(raises),
        seed=draw(st.integers(0, 2**16)),
        form=draw(st.sampled_from(tuple(FORMS))),
        open_keywords=draw(st.booleans()),
        hooks=draw(hooks),
        follow_intermediates=draw(follow_intermediates),
        eval_mode=False if eval_mode is None else draw(eval_mode),  # None: no draw, so the other kinds' examples stay
        **_around_the_region(draw, again, regions, switches, threads),
    )


@st.composite
def sequential_programs(draw, variant, claims, hooks=SOMETIMES, given=st.sampled_from(("tensor", "tensor", "tuple")),
                        tuples=st.booleans()):
    """A checkpoint_sequential program: functions (up to eight or so) handing on a tensor, or with ``tuples``
    tuples too, given one tensor or a tuple (``given``); any valid segment count."""
    features = claims.features
    sequential_input = draw(given)
    functions = draw(sequential_functions(sequential_input == "tuple", draw(tuples)))
    keep = {"preserve_rng_state"} & set(features)
    return Program(
        variant=variant,
        inputs=(Input(draw(st.booleans())),),
        sequential=functions,
        segments=draw(st.integers(1, len(functions))),
        as_sequential=draw(st.booleans()),
        dtype=draw(st.sampled_from(["float64", "float32"])),
        options=tuple(o for o in draw(options(variant, features)) if o[0] in keep),
        forward_contexts=draw(contexts(("autocast", "no_grad", "default_device"), 1)),
        steps=draw(st.lists(st.sampled_from(("draw", "reseed", "read")), max_size=2).map(tuple)),
        backward=draw(st.sampled_from(("backward", "backward_twice", "autograd_grad", "backward_inputs"))),
        backward_contexts=draw(contexts(BACKWARD_CONTEXTS, 1)),
        seed=draw(st.integers(0, 2**16)),
        hooks=draw(hooks),
        sequential_input=sequential_input,
    )


# ---------------------------------------------------- the caller's program around the region (issue 35, items 4, 5)

def _around_the_region(draw, again, regions, switches, threads) -> dict:
    """The Program fields of the caller's program around the region: a second, healthy call after a fault; the
    same callable checkpointed once per region; the API's switches held around the forward; two threads."""
    held, exits = draw(switches)
    return dict(again=draw(again), regions=draw(regions), switches=held, switch_exits=exits, threads=draw(threads))


@st.composite
def held_switches(draw, features, max_size=3, debug=False):
    """The API's own context managers (SWITCHES) the implementation claims, held around the forward, nested in
    the order drawn, and an order to leave them in that the API allows (allowed_exit_orders).

    set_checkpoint_debug_enabled(True) only with ``debug``, as debug=True in options(): torch 2.13 fails a
    region's second recompute under it (expectations.toml), which would hide what else a test finds."""
    names = sorted(n for n in SWITCHES if n in features)
    if not names:
        return (), ()
    values = {"early_stop": st.booleans(), "debug": st.sampled_from((True, False, None) if debug else (False, None))}
    switch = st.sampled_from(names).flatmap(lambda name: st.tuples(st.just(name), values[name]))
    held = tuple(draw(st.lists(switch, min_size=1, max_size=max_size)))
    return held, draw(st.sampled_from(allowed_exit_orders(held)))


# What takes a tuple and gives a tensor: some "pair"s, then "merge" (program.TUPLE_FUNCTIONS).
_TUPLE_TO_TENSOR = st.lists(st.just("pair"), max_size=2).map(lambda pairs: (*pairs, "merge"))


@st.composite
def sequential_functions(draw, tuple_input=False, tuples=False):
    """checkpoint_sequential's functions, each taking what the one before returns: a tensor, or with ``tuples``
    a tuple that "split" makes (or the input is) and "merge" takes apart; the last may return a tuple."""
    single = st.sampled_from(tuple(SEQUENTIAL_FUNCTIONS)).map(lambda f: (f,))
    unit = st.one_of(single, single, _TUPLE_TO_TENSOR.map(lambda rest: ("split", *rest))) if tuples else single
    head = draw(_TUPLE_TO_TENSOR) if tuple_input else ()
    body = sum(draw(st.lists(unit, min_size=0 if head else 1, max_size=4)), ())
    return head + body + ("split",) * (tuples and draw(st.booleans()))
