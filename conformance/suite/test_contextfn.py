"""context_fn (clauses contextfn.*)."""

import contextlib

import pytest
import torch

from conformance.testing.assertions import ANY_ERROR, assert_raises, assert_rejected, assert_same_gradients, backward_of_sum
from conformance.fixtures.functions import sin_exp
from conformance.fixtures.inputs import leaf, twin_leaves
from conformance.fixtures.probes import RecordingContext


@pytest.mark.clause("contextfn.forward-and-recompute")
def test_forward_runs_under_first_recompute_under_second(ckpt):
    log = []

    def fn(x):
        log.append(f"fn under {RecordingContext.active.name if RecordingContext.active else 'nothing'}")
        return sin_exp(x)  # saves tensors, so backward needs a recompute

    def context_fn():
        return RecordingContext("first", log), RecordingContext("second", log)

    x, reference = twin_leaves()
    out = ckpt.checkpoint(fn, x, context_fn=context_fn)
    assert log == ["enter first", "fn under first", "exit first"], f"forward: {log}"
    out.sum().backward()
    recompute = log[3:]
    assert recompute == ["enter second", "fn under second", "exit second"], f"recompute: {recompute}"
    sin_exp(reference).sum().backward()
    assert_same_gradients(x.grad, reference.grad, ["input gradient"])


@pytest.mark.clause("contextfn.forward-and-recompute")
def test_every_recompute_runs_under_the_second_manager(ckpt):
    """Every recompute, not the first only: a retained graph's second backward recomputes the region again
    (recompute.each-backward), under the second manager again, whether context_fn's managers are made once per call
    or once per recompute (the scenario of torch's test_checkpointing_without_reentrant_with_context_fn)."""
    log = []

    def fn(x):
        log.append(f"fn under {RecordingContext.active.name if RecordingContext.active else 'nothing'}")
        return sin_exp(x)

    x, reference = twin_leaves()
    out = ckpt.checkpoint(fn, x, context_fn=lambda: (RecordingContext("first", log), RecordingContext("second", log)))
    out.sum().backward(retain_graph=True)
    out.sum().backward()
    runs = [entry for entry in log if entry.startswith("fn")]
    assert runs[1:] and set(runs[1:]) == {"fn under second"}, f"the recomputes of two backwards: {log}"
    sin_exp(reference).sum().backward(retain_graph=True)
    sin_exp(reference).sum().backward()
    assert_same_gradients(x.grad, reference.grad, ["input gradient"])


@pytest.mark.clause("contextfn.reentrant-rejects")
def test_reentrant_rejects_context_fn(ckpt):
    def context_fn():
        return contextlib.nullcontext(), contextlib.nullcontext()

    x = leaf()
    assert_rejected(ANY_ERROR, "an error for a non-default context_fn with use_reentrant=True",
                    ckpt.checkpoint, sin_exp, x, context_fn=context_fn, then=backward_of_sum)


class Suppresses:
    """A context manager that swallows any exception raised inside it."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return True


@pytest.mark.clause("contextfn.suppressed-forward-error")
def test_suppressed_forward_error_still_raises(ckpt):
    class RegionFailed(Exception):
        pass

    def failing(x):
        raise RegionFailed("the checkpointed function failed")

    def context_fn():
        return Suppresses(), contextlib.nullcontext()

    x = leaf()
    # Any error says the forward failed (torch's RuntimeError, the function's own exception re-raised): the
    # docs name none, they only say checkpoint returns the function's output, and there is none.
    with assert_raises(ANY_ERROR, "an error: the forward failed, so checkpoint has no output to return"):
        ckpt.checkpoint(failing, x, context_fn=context_fn)


@contextlib.contextmanager
def default_device(setter, device):
    """device is the default device inside the block, set the named way (dimension "default device setter")."""
    if setter == "torch.device":
        with torch.device(device):
            yield
        return
    torch.set_default_device(device)
    try:
        yield
    finally:
        torch.set_default_device(None)  # the suite runs without a global default device


@pytest.mark.clause("contextfn.default-device-replayed")
@pytest.mark.parametrize("device_setter", ["torch.device", "set_default_device"])
def test_recompute_uses_the_forwards_default_device(ckpt, device_setter):
    devices = []

    def fn(x):
        scale = torch.full((3,), 2.0)  # no device given: lands on the default device
        devices.append(scale.device.type)
        return (x * scale).sin()  # saves tensors, so backward needs a recompute

    # meta tensors: a device other than the CPU that needs no hardware; the results are shapes only.
    with default_device(device_setter, "meta"):
        x = torch.ones(3, requires_grad=True)
        out = ckpt.checkpoint(fn, x)
    out.sum().backward()  # under the CPU default again
    assert devices[1:], "the function was not re-run in backward"
    assert set(devices) == {"meta"}, f"default device seen by the forward, then the recompute(s): {devices}"
    assert x.grad is not None and x.grad.shape == x.shape, "no input gradient after backward"
