"""The determinism check (clauses determinism.*).

ChangesBetweenPasses behaves differently once a flag is flipped between forward and backward (the
docs' "due to a global variable"): the recompute then saves a tensor of another shape or dtype.
"""

import pytest
import torch

from conformance.testing.assertions import ANY_ERROR, assert_raises, assert_rejected, backward_of_sum
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


class ChangesASavedIndexMaskOrComplex:
    """The function saves a tensor of the kind named (an integer index, a bool mask, a complex intermediate), which
    changes dtype or shape once `changed` is set; the output and every floating tensor saved stay as they were."""

    KINDS = ("integer-index", "bool-mask", "complex")

    def __init__(self, kind):
        self.kind, self.changed = kind, False

    def __call__(self, x):
        if self.kind == "integer-index":  # index_select saves its index: int64, then int32
            index = torch.arange(x.shape[0], dtype=torch.int32 if self.changed else torch.int64)
            return x.index_select(0, index)
        if self.kind == "bool-mask":  # masked_fill saves its mask: one per element, then one row broadcast
            mask = (torch.arange(x.shape[1]) % 2 == 0).expand(x.shape[0] if not self.changed else 1, -1)
            return x.masked_fill(mask, 0.0) * x
        dtype = torch.complex128 if self.changed else torch.complex64  # abs saves its complex argument
        return (x.to(dtype) * (1 + 1j)).abs().to(x.dtype)


@pytest.mark.clause("determinism.default-detects")
@pytest.mark.parametrize("kind", ChangesASavedIndexMaskOrComplex.KINDS)
def test_metadata_change_of_a_saved_index_mask_or_complex_tensor_raises_checkpoint_error(ckpt, kind):
    """The check compares every tensor the region saves, not only the floating ones gradients flow through."""
    function = ChangesASavedIndexMaskOrComplex(kind)
    loss = ckpt.checkpoint(function, leaf()).sum()
    function.changed = True
    with assert_raises(ckpt.CheckpointError, f"a CheckpointError for a recompute whose saved {kind} changed"):
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
