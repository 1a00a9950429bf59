"""The determinism check (clauses determinism.*).

ChangesBetweenPasses behaves differently once a flag is flipped between forward and backward (the
docs' "due to a global variable"): the recompute then saves a tensor of another shape or dtype.
"""

import pytest

from conformance.assertions import assert_raises
from fixtures.functions import ChangesBetweenPasses
from fixtures.inputs import leaf


def backward_after_change(ckpt, change, **kwargs):
    """Forward through the checkpoint, flip the function's behaviour, then run backward."""
    fn = ChangesBetweenPasses(change)
    out = ckpt.checkpoint(fn, leaf(), **kwargs)
    fn.changed = True
    out.sum().backward()


@pytest.mark.clause("determinism.default-detects")
@pytest.mark.parametrize("change", ["shape", "dtype"])
@pytest.mark.parametrize("keyword", [{}, {"determinism_check": "default"}], ids=["omitted", "default"])
def test_metadata_change_raises_checkpoint_error(ckpt, change, keyword):
    with assert_raises(ckpt.CheckpointError, f"a CheckpointError for a recompute with a different {change}"):
        backward_after_change(ckpt, change, **keyword)


@pytest.mark.clause("determinism.none-disables")
def test_none_lets_a_dtype_change_through(ckpt):
    # Must complete: with the comparison off, nothing else objects to a float64 recompute.
    backward_after_change(ckpt, "dtype", determinism_check="none")


@pytest.mark.clause("determinism.invalid-rejected")
def test_unknown_determinism_check_is_rejected(ckpt):
    x = leaf()
    with assert_raises(Exception, "an error for determinism_check='sometimes'"):
        ckpt.checkpoint(ChangesBetweenPasses("shape"), x, determinism_check="sometimes").sum().backward()


@pytest.mark.clause("determinism.reentrant-disabled")
def test_reentrant_does_not_check_a_dtype_change(ckpt):
    backward_after_change(ckpt, "dtype")
