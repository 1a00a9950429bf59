"""A module's buffers after forward and backward (clause modulestate.buffers-match) on two small modules: the
module sweep (test_sweep_modules.py) checks every module of torch's module_db, this file the two ways a function
writes a buffer that the sweep's modules do not both show: an operator's `out=` keyword and BatchNorm's running
statistics (which native_batch_norm writes without its schema saying so)."""

import pytest
import torch

from conformance.testing.assertions import assert_same_buffers, assert_same_gradients
from conformance.fixtures.inputs import twin_leaves


class CountsCalls(torch.nn.Module):
    """Counts its calls in a buffer, written through an operator's out= keyword."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        torch.add(self.calls, 1, out=self.calls)
        return x.sin().exp()


def batch_norm():
    return torch.nn.Sequential(torch.nn.BatchNorm1d(4), torch.nn.Tanh())


@pytest.mark.clause("modulestate.buffers-match")
@pytest.mark.parametrize("make", [CountsCalls, batch_norm], ids=["out-keyword", "batch-norm"])
def test_buffers_after_forward_and_backward_equal_the_uncheckpointed_run(ckpt, make):
    module, plain = make(), make()
    x, reference = twin_leaves(6, 4)
    ckpt.checkpoint(module, x).sum().backward()
    plain(reference).sum().backward()
    assert_same_buffers(module, plain)


class AddsBufferToSorted(torch.nn.Module):
    """Sorts its input (a tuple-returning op), then adds a buffer into the sorted values in place."""

    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.linspace(-1, 1, 4))

    def forward(self, x):
        values, _ = x.sort(dim=-1)
        values.add_(self.bias)
        return values.exp()


@pytest.mark.clause("api.same-gradients")
def test_in_place_write_into_a_tuple_output_beside_a_buffer_gives_uncheckpointed_gradients(ckpt):
    """An implementation that keeps outside state (buffers) from being written by the recompute must still let
    the recompute write its own tensors: here sort's values, written in place together with a buffer."""
    module = AddsBufferToSorted()
    x, reference = twin_leaves(6, 4)
    ckpt.checkpoint(module, x).sum().backward()
    module(reference).sum().backward()
    assert_same_gradients(x.grad, reference.grad, ["input gradient"])
