"""Every pair of program features, within the default budget: a pairwise covering design over the oracle's
feature dimensions (issue 35, item 6).

Random draws reach a combination of two rare features (a fault and autograd inside, a keyword argument and
a context_fn) only at hundreds of examples. A covering array has a row for every pair of values of every two
dimensions, in about as many rows as the two largest dimensions' product: each row fixes one value per
dimension and hypothesis draws the rest of the program around it (conformance/oracle/strategies.py's
``programs``, whose keyword arguments are the dimensions), so each row is still a valid program the
strategies could have drawn, and a failing one shrinks as any other. ``allpairspy`` builds the array,
deterministically: the same rows every run.

A dimension's values come from the program model's own vocabularies (conformance/oracle/program.py), so
what the model gains joins the design without code here; ops enter by kind, so that pairs stay few.
"""

from __future__ import annotations

from functools import cache

from allpairspy import AllPairs
from hypothesis import strategies as st

from conformance.oracle.program import (BACKWARDS, CALLER_STEPS, CONTEXTS, FAULTS, INNER_AUTOGRAD_OPS, META_CONTEXTS,
                                        NON_REENTRANT_OUTPUTS, OUTPUTS, RANDOM_OPS, Input, Nested)
from conformance.oracle.strategies import CONTEXT_FNS, FACTORY_OPS, held_switches

# The region's ops by kind: what a pair of features means for ops. Each row takes one op of its kind (rotating
# through the kind's ops row by row, so every op is drawn somewhere).
OP_KINDS = {
    "parameters": ("linear", "functional_linear", "layer_norm"),
    "elementwise": ("tanh", "relu", "gelu", "sigmoid", "softmax", "matmul"),
    "argument": ("mul_arg", "add_arg", "scale"),
    "in-place": ("in_place_add", "in_place_relu"),
    "no-grad source": ("detach", "no_grad_block"),
    "index": ("integer_index",),
    "identity or device": ("object_identity", "default_device_branch"),
    "random": RANDOM_OPS,
    "nested": ("nested",),
    "autograd inside": INNER_AUTOGRAD_OPS,
}
ARGUMENTS = (("positional", "leaf"), ("positional", "transposed"), ("positional", "same-as-first"),
             ("positional", "view-of-first"), ("bound", "computed-from-first"), ("nested", "leaf"), ("deep", "leaf"),
             ("keyword", "leaf"))


def dimensions(variant: str, features) -> dict[str, tuple]:
    """Each dimension's values for a variant and what the implementation claims: op kinds, arguments, output
    structures, checkpoint's options (one set at a time), contexts around the forward, caller steps, backward
    kinds, faults, dtypes and the caller's program around the region."""
    non_reentrant = variant == "non_reentrant"
    kinds = [k for k in OP_KINDS if non_reentrant or k != "autograd inside"]
    arguments = [a for a in ARGUMENTS if non_reentrant and (a[0] != "keyword" or "kwargs" in features)
                 or a[0] in ("positional", "bound")]
    options = [("preserve_rng_state", v) for v in (True, False) if "preserve_rng_state" in features]
    if non_reentrant:
        options += [(name, value) for name, values in (("determinism_check", ("default", "none")), ("early_stop", (True, False)),
                                                        ("context_fn", CONTEXT_FNS)) if name in features for value in values]
    return {
        "op": tuple(kinds),
        "argument": tuple(arguments),
        "output": tuple(o for o in OUTPUTS if non_reentrant or o not in NON_REENTRANT_OUTPUTS),
        "option": ((), *((o,) for o in options)),
        "context": ((), *((c,) for c in CONTEXTS)),
        "step": ((), *((s,) for s in CALLER_STEPS)),
        "backward": tuple(BACKWARDS),
        "fault": ("", *FAULTS),
        "dtype": ("float64", "float32", "bfloat16", "complex128"),
        "caller": ("plain", "hooks", "two regions", "again after a fault", "switches", "threads"),
    }


# Pairs no program can hold, as the oracle's test kinds restrict them (conformance/suite/test_oracle.py): each
# caller feature or op kind (a key) with what it rules out, a predicate of (dimension, value).
_CALM = ("fault", "context", "step")  # a program that adds its own moving part keeps these plain
EXCLUDES = {
    # two threads' random draws and hooks would interleave in an order no run can repeat; one backward
    ("caller", "threads"): lambda name, value: name in _CALM and bool(value) or name == "op" and value == "random"
    or name == "backward" and value != "backward",
    # torch 2.13 fails a second recompute under debug (declared for the options test): one backward
    ("caller", "switches"): lambda name, value: name in _CALM and bool(value)
    or name == "backward" and value not in ("backward", "backward_one_output", "autograd_grad"),
    ("caller", "two regions"): lambda name, value: name in ("fault", "context") and bool(value),
    ("caller", "again after a fault"): lambda name, value: name in ("context", "step") and bool(value),
    ("op", "autograd inside"): lambda name, value: name in ("fault", "context") and bool(value),
}


def _possible(row: dict) -> bool:
    return not any(row.get(key) == value and any(rule(n, v) for n, v in row.items() if n != key)
                   for (key, value), rule in EXCLUDES.items())


@cache
def rows(variant: str, features: frozenset) -> tuple[dict, ...]:
    """The covering array: every pair of values of every two dimensions that a program can hold, in some row."""
    names = list(dimensions(variant, features))
    values = [dimensions(variant, features)[n] for n in names]
    return tuple(dict(zip(names, row)) for row in AllPairs(values, filter_func=lambda row: _possible(dict(zip(names, row)))))


def overrides(row: dict, index: int, variant: str, features) -> dict:
    """The ``programs`` keyword arguments that fix the row's values (conformance/oracle/strategies.py)."""
    kind = OP_KINDS[row["op"]]
    if set(META_CONTEXTS) & set(row["context"]):  # a factory call there makes a meta tensor: values undefined
        kind = tuple(op for op in kind if op not in FACTORY_OPS) or ("dropout",)
    op = kind[index % len(kind)]
    inside = (Nested(variant != "reentrant", ("linear", "tanh")),) if op == "nested" else \
        ("linear", op) if op in INNER_AUTOGRAD_OPS else (op,)
    place, kind_of_input = row["argument"]
    caller = row["caller"]
    return dict(
        random=st.just(op in RANDOM_OPS),
        inside=st.just(inside),
        arguments=st.just((Input(True), Input(True, place, kind_of_input))),
        output=st.just(row["output"]),
        checkpoint_options=st.just(row["option"]),
        forward_contexts=st.just(row["context"]),
        steps=st.just(row["step"]),
        backward=st.just(row["backward"]),
        raises=st.just(row["fault"] or ("forward" if caller == "again after a fault" else "")),
        dtypes=st.just(row["dtype"]),
        hooks=st.just(caller == "hooks"),
        regions=st.just(2 if caller == "two regions" else 1),
        again=st.just(caller == "again after a fault"),
        switches=held_switches(features) if caller == "switches" else st.just(((), ())),
        threads=st.just(caller == "threads"),
    )
