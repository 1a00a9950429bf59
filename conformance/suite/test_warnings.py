"""The warning for an omitted use_reentrant, and its absence when it is passed (clauses warnings.*).

These tests call the implementation's module directly, without use_reentrant: the Checkpointer
(ckpt.checkpoint, ckpt.sequential) always passes it, which is exactly the case that must not warn.
Omitting use_reentrant selects the reentrant default, so the "not passed" clauses bind "reentrant".
"""

import warnings

import pytest
import torch

from fixtures.functions import sin_exp
from fixtures.inputs import leaf


def use_reentrant_notices(call):
    """Run call with every warning recorded (no deduplication: torch attributes its warning to one
    internal line, so the default filters would show it once per process); return the warnings and the
    exception that mention use_reentrant. The docs say an omitted use_reentrant "will raise an exception"
    in a future version, so an exception that says so is accepted in place of a warning."""
    raised = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except Exception as exc:  # noqa: BLE001  (the future behaviour the docs announce)
            raised = exc
    notices = [w for w in caught if issubclass(w.category, Warning) and "use_reentrant" in str(w.message)]
    if raised is not None and "use_reentrant" not in str(raised):
        raise raised
    return notices, raised


def stack():
    return [torch.nn.Tanh(), torch.nn.Linear(8, 8), torch.nn.Tanh()]


@pytest.mark.clause("warnings.checkpoint-use-reentrant-omitted")
def test_checkpoint_without_use_reentrant_warns(ckpt):
    # The one case that must bypass ckpt.checkpoint: call the implementation without use_reentrant.
    notices, raised = use_reentrant_notices(lambda: ckpt.impl.module.checkpoint(sin_exp, leaf()))
    assert notices or raised, "checkpoint without use_reentrant emitted no warning mentioning use_reentrant"


@pytest.mark.clause("warnings.sequential-use-reentrant-omitted")
def test_checkpoint_sequential_without_use_reentrant_warns(ckpt):
    # The one case that must bypass ckpt.sequential: call the implementation without use_reentrant.
    notices, raised = use_reentrant_notices(lambda: ckpt.impl.module.checkpoint_sequential(stack(), 2, leaf()))
    assert notices or raised, "checkpoint_sequential without use_reentrant emitted no warning mentioning use_reentrant"


@pytest.mark.clause("warnings.explicit-use-reentrant-silent")
def test_checkpoint_with_explicit_use_reentrant_does_not_warn_about_it(ckpt):
    notices, raised = use_reentrant_notices(lambda: ckpt.checkpoint(sin_exp, leaf()).sum().backward())
    assert raised is None, f"checkpoint with use_reentrant={ckpt.use_reentrant} raised {raised!r}"
    assert not notices, f"use_reentrant={ckpt.use_reentrant} was passed, yet: {[str(w.message)[:100] for w in notices]}"


@pytest.mark.clause("warnings.explicit-use-reentrant-silent")
def test_checkpoint_sequential_with_explicit_use_reentrant_does_not_warn_about_it(ckpt):
    if "checkpoint_sequential" not in ckpt.impl.capabilities.features:
        pytest.skip("the implementation does not claim checkpoint_sequential")
    notices, raised = use_reentrant_notices(lambda: ckpt.sequential(stack(), 2, leaf()).sum().backward())
    assert raised is None, f"checkpoint_sequential with use_reentrant={ckpt.use_reentrant} raised {raised!r}"
    assert not notices, f"use_reentrant={ckpt.use_reentrant} was passed, yet: {[str(w.message)[:100] for w in notices]}"
