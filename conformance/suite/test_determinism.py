"""The determinism check (clauses determinism.*).

ChangesBetweenPasses behaves differently once a flag is flipped between forward and backward (the
docs' "due to a global variable"): the recompute then saves a tensor of another shape or dtype.
"""

import pytest

from conformance.assertions import ANY_ERROR, assert_raises, assert_rejected, backward_of_sum
from conformance.fixtures.functions import ChangesBetweenPasses, ChangesSaveCount
from conformance.fixtures.inputs import OPTIONS, leaf, options_for

CHANGES = ("shape", "dtype")  # the "recompute change" dimension: what differs in a recomputed saved tensor


def after_change(ckpt, change, **kwargs):
    """Forward through the checkpoint and flip the function's behaviour; return the loss to run backward on."""
    fn = ChangesBetweenPasses(change)
    out = ckpt.checkpoint(fn, leaf(), **kwargs)
    fn.changed = True
    return out.sum()


@pytest.mark.clause("determinism.default-detects")
@pytest.mark.parametrize("change", CHANGES)
@pytest.mark.parametrize("options", OPTIONS)
def test_metadata_change_raises_checkpoint_error(ckpt, change, options):
    loss = after_change(ckpt, change, **options_for(ckpt, options))
    with assert_raises(ckpt.CheckpointError, f"a CheckpointError for a recompute with a different {change}"):
        loss.backward()


class ChangesItsSecondOutput:
    """Two outputs: sin of the input (saves the input, first), and exp of its first rows (saves its result,
    second). Once `changed` is set the recompute takes one row fewer, so only the second saved tensor differs."""

    def __init__(self):
        self.changed = False

    def __call__(self, x):
        rows = x.shape[0] - 1 if self.changed else x.shape[0]
        return x.sin(), x[:rows].exp()


@pytest.mark.clause("determinism.default-detects")
def test_metadata_change_after_a_backward_through_another_output_raises_checkpoint_error(ckpt):
    """The first backward (through sin's output only) frees the tensor saved first; the check must still compare
    every tensor the second backward needs, not stop at the first one already freed."""
    fn = ChangesItsSecondOutput()
    first, second = ckpt.checkpoint(fn, leaf())
    first.sum().backward()
    fn.changed = True
    with assert_raises(ckpt.CheckpointError, "a CheckpointError for a recompute whose second saved tensor has another shape"):
        second.sum().backward()


@pytest.mark.clause("determinism.none-disables")
@pytest.mark.parametrize("change", CHANGES)
def test_none_lets_a_metadata_change_through(ckpt, change):
    # Must complete: with the comparison off, nothing else objects to the recompute (its output keeps
    # the forward's shape; a float64 saved tensor or a 1-row one broadcasts in every gradient formula).
    after_change(ckpt, change, determinism_check="none").backward()


@pytest.mark.clause("determinism.invalid-rejected")
def test_unknown_determinism_check_is_rejected(ckpt):
    fn, x = ChangesBetweenPasses("shape"), leaf()
    assert_rejected(ANY_ERROR, "an error for determinism_check='sometimes'",
                    ckpt.checkpoint, fn, x, determinism_check="sometimes", then=backward_of_sum)


@pytest.mark.clause("determinism.reentrant-disabled")
@pytest.mark.parametrize("change", CHANGES)
def test_reentrant_does_not_check_a_metadata_change(ckpt, change):
    after_change(ckpt, change).backward()


def after_count_change(ckpt, change, **kwargs):
    """Like after_change, but the recompute saves fewer or more tensors than the forward."""
    fn = ChangesSaveCount(change)
    out = ckpt.checkpoint(fn, leaf(), **kwargs)
    fn.changed = True
    return out.sum()


@pytest.mark.clause("determinism.fewer-saved-detected")
@pytest.mark.parametrize("keyword", [{}, {"determinism_check": "default"}], ids=["omitted", "default"])
def test_fewer_saved_tensors_raise_checkpoint_error(ckpt, keyword):
    # Only the default check: the docs leave determinism_check="none" open for this case.
    loss = after_count_change(ckpt, "fewer", **keyword)
    with assert_raises(ckpt.CheckpointError, "a CheckpointError for a recompute that saves fewer tensors"):
        loss.backward()


@pytest.mark.clause("determinism.more-saved-detected")
@pytest.mark.parametrize("switch", ["keyword", "context-manager"])
def test_more_saved_tensors_in_a_full_recompute_raise_checkpoint_error(ckpt, switch):
    what = "a CheckpointError for a full recompute that saves more tensors than the forward"
    if switch == "keyword":
        loss = after_count_change(ckpt, "more", early_stop=False)
    else:
        with ckpt.set_checkpoint_early_stop(False):  # read at forward time
            loss = after_count_change(ckpt, "more")
    with assert_raises(ckpt.CheckpointError, what):
        loss.backward()
