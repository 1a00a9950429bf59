"""The checkpointed region does not keep its activations alive (clauses memory.*).

On any device: what the autograd graph packs (an ambient saved_tensors_hooks sees it) and whether
intermediates are still alive (weak references, to tensors or to their memory). On CUDA: the caching
allocator's statistics. Each probe is first shown to see the intermediates of the un-checkpointed run.
"""

import gc
import weakref

import pytest
import torch
from torch import nn

from conformance.testing.assertions import assert_same_gradients
from conformance.fixtures.inputs import ALIASINGS, aliased, leaf, twin_leaves
from conformance.fixtures.models import seeded, twins
from conformance.fixtures.probes import StorageWatch, packed_tensors, shares_storage


def sin_chain(x, y, keep=None):
    """Four sins; each one's input is saved for backward. keep collects weakrefs to the intermediates."""
    a = (x * y).sin()
    b = a.sin()
    c = b.sin()
    if keep is not None:
        keep += [weakref.ref(t) for t in (a, b, c)]
    return c.sin()


def saved_besides(packed, args) -> list[tuple[int, ...]]:
    """The shapes of the packed tensors that hold memory of their own: not one of ``args`` (nor a view
    of one), and not empty (a 0-element tensor keeps no activation alive; torch 2.6 saves one per call)."""
    return [tuple(t.shape) for t in packed if t.numel() and not any(shares_storage(t, a) for a in args)]


@pytest.mark.clause("memory.only-inputs-saved")
def test_graph_saves_only_the_inputs(ckpt):
    x, y = leaf(seed=1), leaf(seed=2)
    with packed_tensors() as uncheckpointed:
        sin_chain(x, y)
    assert any(not shares_storage(t, x) and not shares_storage(t, y) for t in uncheckpointed), (
        "probe check: the un-checkpointed run should pack intermediates"
    )
    with packed_tensors() as packed:
        out = ckpt.checkpoint(sin_chain, x, y)
    intermediates = saved_besides(packed, [x, y])
    assert not intermediates, f"the autograd graph saved {len(intermediates)} tensors produced inside the function"
    out.sum().backward()  # and the region still backpropagates


@pytest.mark.clause("memory.intermediates-freed")
def test_intermediates_are_freed_after_forward(ckpt):
    (x, x_ref), (y, y_ref) = twin_leaves(seed=1), twin_leaves(seed=2)
    reference_refs = []
    expected = sin_chain(x_ref, y_ref, reference_refs)
    gc.collect()
    assert all(r() is not None for r in reference_refs), "probe check: the un-checkpointed run keeps its intermediates"

    forward_refs = []
    first_call = []

    def fn(x, y):
        # Only the forward's intermediates are watched, not the recompute's.
        keep = forward_refs if not first_call else None
        first_call.append(True)
        return sin_chain(x, y, keep)

    out = ckpt.checkpoint(fn, x, y)
    gc.collect()
    alive = [i for i, r in enumerate(forward_refs) if r() is not None]
    assert not alive, f"intermediates {alive} (of {len(forward_refs)}) are still alive after the checkpointed forward"
    out.sum().backward()
    expected.sum().backward()
    assert_same_gradients([x.grad, y.grad], [x_ref.grad, y_ref.grad], ["x gradient", "y gradient"])


def block_stack(device, blocks=8, width=256):
    return seeded(lambda: nn.Sequential(*[
        nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))
        for _ in range(blocks)
    ])).to(device)


def cuda_memory_of(run, model, x):
    """(bytes held between forward and backward, peak bytes) above what was allocated before."""
    # Warm up first, so one-off allocations (cuBLAS workspaces, ...) fall outside the measurement.
    run(model, x).sum().backward()
    model.zero_grad(set_to_none=True)
    x.grad = None
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    out = run(model, x)
    held = torch.cuda.memory_allocated() - before
    out.sum().backward()
    torch.cuda.synchronize()
    return held, torch.cuda.max_memory_allocated() - before


@pytest.mark.clause("memory.peak-below-uncheckpointed")
def test_checkpointed_stack_uses_less_cuda_memory(ckpt, device):
    if device != "cuda":
        pytest.skip("allocator memory is measured on CUDA; on CPU memory.only-inputs-saved and "
                    "memory.intermediates-freed check the same promise")
    # Activations must outweigh the parameters' gradients, which both runs allocate during backward: a batch of
    # 8192 rows of width 256 makes each saved activation 8 MiB against 0.25 MiB per weight (a batch of 1024 at
    # width 1024, tried first on an H100, let the gradients decide the peak: 130 MB checkpointed, 122 MB plain).
    model, reference = twins(block_stack(device))
    x, x_ref = twin_leaves(8192, 256, device=device)

    def plain(model, x):
        return model(x)

    def checkpointed(model, x):
        for block in model:
            x = ckpt.checkpoint(block, x)
        return x

    plain_held, plain_peak = cuda_memory_of(plain, reference, x_ref)
    held, peak = cuda_memory_of(checkpointed, model, x)
    assert held < plain_held, f"after forward the checkpointed stack holds {held} bytes, without checkpointing {plain_held}"
    assert peak < plain_peak, f"the checkpointed stack peaks at {peak} bytes, without checkpointing {plain_peak}"


@pytest.mark.clause("memory.only-inputs-saved")
@pytest.mark.parametrize("aliasing", ALIASINGS)
def test_graph_saves_only_the_passed_tensors_whatever_they_alias(ckpt, aliasing):
    """"Any passed tensors in args are kept alive": the very tensors passed (views and non-leaf tensors
    included), not copies of them."""
    args, _ = aliased(aliasing)
    with packed_tensors() as packed:
        out = ckpt.checkpoint(sin_chain, *args)
    others = saved_besides(packed, args)
    assert not others, f"the autograd graph saved {len(others)} tensors that are not the arguments passed ({aliasing})"
    out.sum().backward()


class SquareWatched(torch.autograd.Function):
    """x * x, saving x: its backward watches the memory of the saved tensor backward gave it."""

    @staticmethod
    def forward(ctx, x, watch):
        ctx.watch = watch
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        ctx.watch.watch(x)
        return 2 * x * grad, None


class WatchedRegion:
    """sin -> square -> square, each op saving its input. Its recomputes (the calls after the first)
    watch each intermediate as it is made, before any early stop; the squares' backward watches the
    recomputed tensors backward uses, whatever tensor object carries them."""

    def __init__(self):
        self.watch, self.calls = StorageWatch(), 0

    def __call__(self, x):
        self.calls += 1
        made = self.watch if self.calls > 1 else StorageWatch()  # the forward's own: intermediates-freed
        a = made.watch(x.sin())
        b = made.watch(SquareWatched.apply(a, self.watch))
        return SquareWatched.apply(b, self.watch)


def recomputed_alive_as_backward_leaves(ckpt, retain_graph):
    """Backward through two chained regions. As backward leaves each region (its input's gradient is
    computed, the ops before the regions are still ahead), how many of the region's recomputed tensors
    are alive: {region: (alive, watched)}."""
    regions = {"first": WatchedRegion(), "second": WatchedRegion()}
    x = leaf() * 1.5  # not a leaf: its hook fires with backward still running
    between = ckpt.checkpoint(regions["first"], x)
    out = ckpt.checkpoint(regions["second"], between)
    alive = {}

    def on_leaving(name):
        def hook(grad):
            alive[name] = (regions[name].watch.alive(), len(regions[name].watch.refs))

        return hook

    between.register_hook(on_leaving("second"))
    x.register_hook(on_leaving("first"))
    out.sum().backward(retain_graph=retain_graph)
    return alive


def assert_recomputed_freed(alive, how):
    for region in ("second", "first"):
        assert region in alive, f"probe check: backward never reached the {region} region's input"
        held, watched = alive[region]
        assert watched, f"probe check: the {region} region was not recomputed (nothing watched)"
        assert not held, (
            f"{held} of the {watched} tensors recomputed for the {region} region are still alive after "
            f"backward ({how}) has finished with the region and gone on: recomputed tensors must not be "
            "kept alive once backward has used them"
        )


@pytest.mark.clause("memory.recomputed-freed-during-backward")
def test_recomputed_tensors_are_freed_once_backward_has_used_them(ckpt):
    alive = recomputed_alive_as_backward_leaves(ckpt, retain_graph=False)
    assert_recomputed_freed(alive, "retain_graph=False")


@pytest.mark.clause("memory.recomputed-freed-with-retained-graph")
def test_recomputed_tensors_are_freed_when_backward_retains_the_graph(ckpt):
    # That the retained graph backpropagates again is retain.repeated-backward's check, not this clause's.
    alive = recomputed_alive_as_backward_leaves(ckpt, retain_graph=True)
    assert_recomputed_freed(alive, "retain_graph=True")
