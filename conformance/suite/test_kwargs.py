"""Keyword arguments for the checkpointed function, and checkpoint's own keywords (clauses kwargs.*)."""

import contextlib

import pytest

from conformance.testing.assertions import ANY_ERROR, assert_rejected, assert_same_forward, assert_same_gradients, backward_of_sum
from conformance.fixtures.inputs import twin_leaves


def scaled_shift(x, *, scale=1.0, shift=None):
    """A keyword-only float and a keyword-only tensor, both changing value and gradient."""
    out = (x.sin() * scale).exp()
    return out if shift is None else out * shift.tanh()


def own_keyword_defaults(x, preserve_rng_state="function default", use_reentrant="function default",
                         context_fn="function default", determinism_check="function default",
                         debug="function default", early_stop="function default"):
    """Declares checkpoint's own keyword names; returns x and records what it received."""
    own_keyword_defaults.seen.append(dict(preserve_rng_state=preserve_rng_state, use_reentrant=use_reentrant,
                                          context_fn=context_fn, determinism_check=determinism_check,
                                          debug=debug, early_stop=early_stop))
    return x.sin().exp()


def assert_function_kept_its_defaults(seen):
    assert seen, "the function was never called"
    for call, received in enumerate(seen):
        leaked = {k: v for k, v in received.items() if v != "function default"}
        assert not leaked, f"call {call} of the function received checkpoint's own keyword(s) {leaked}"


@pytest.mark.clause("kwargs.non-reentrant-forwarded")
def test_keyword_arguments_reach_forward_and_recompute(ckpt):
    (x, x_ref), (shift, shift_ref) = twin_leaves(), twin_leaves(seed=2)
    out = ckpt.checkpoint(scaled_shift, x, scale=2.5, shift=shift)
    expected = scaled_shift(x_ref, scale=2.5, shift=shift_ref)
    assert_same_forward(out, expected)
    out.sum().backward()
    expected.sum().backward()
    # A recompute without the keywords would give the gradient of scale=1, shift=None.
    assert_same_gradients([x.grad, shift.grad], [x_ref.grad, shift_ref.grad], ["x.grad", "keyword tensor shift.grad"])


@pytest.mark.clause("kwargs.non-reentrant-forwarded")
def test_tensor_passed_only_as_keyword_gets_gradient(ckpt):
    (x, x_ref), (shift, shift_ref) = twin_leaves(requires_grad=False), twin_leaves(seed=2)
    out = ckpt.checkpoint(scaled_shift, x, shift=shift)
    out.sum().backward()
    scaled_shift(x_ref, shift=shift_ref).sum().backward()
    assert_same_gradients(shift.grad, shift_ref.grad, ["keyword tensor shift.grad"])


@pytest.mark.clause("kwargs.reentrant-rejected")
def test_reentrant_rejects_keyword_arguments_for_the_function(ckpt):
    (x, _), (shift, _) = twin_leaves(), twin_leaves(seed=2)
    assert_rejected(ANY_ERROR, "an error for keyword arguments passed to the reentrant variant",
                    ckpt.checkpoint, scaled_shift, x, scale=2.5, shift=shift, then=backward_of_sum)


@pytest.mark.clause("kwargs.own-keywords-consumed")
def test_preserve_rng_state_and_use_reentrant_are_not_forwarded(ckpt):
    own_keyword_defaults.seen = []
    x, _ = twin_leaves()
    ckpt.checkpoint(own_keyword_defaults, x, preserve_rng_state=True).sum().backward()  # use_reentrant too
    assert_function_kept_its_defaults(own_keyword_defaults.seen)


@pytest.mark.clause("kwargs.non-reentrant-options-consumed")
def test_non_reentrant_options_are_not_forwarded(ckpt):
    own_keyword_defaults.seen = []
    x, _ = twin_leaves()
    out = ckpt.checkpoint(own_keyword_defaults, x, context_fn=lambda: (contextlib.nullcontext(), contextlib.nullcontext()),
                          determinism_check="default", debug=False, early_stop=True)
    out.sum().backward()
    assert_function_kept_its_defaults(own_keyword_defaults.seen)
