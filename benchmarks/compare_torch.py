"""Benchmark: reference_impl against torch.utils.checkpoint, same workload, same process.

    python benchmarks/compare_torch.py [--device cuda] [--json out.json]

Workload: a stack of transformer-style MLP blocks (LayerNorm, Linear d->4d, GELU, Dropout,
Linear 4d->d, residual), each block checkpointed; one step = forward, sum, backward. Both
variants (reentrant, non-reentrant). The two implementations take turns step by step, in an
order that alternates (AB BA AB ...), so drift in machine load hits both alike.

Reported per variant: the median step time of each implementation and their ratio
(reference / torch, goal <= 1.05), and the peak memory of one step and its ratio (goal <= 1.00).

Memory. On CUDA: torch.cuda.max_memory_allocated() above what was allocated before the step.
On CPU torch keeps no allocator statistics, so the script counts the bytes of tensor storages
alive, device-agnostically: a dispatch mode sees every tensor an operator creates (in the forward,
the recompute and the backward), registers its storage once, and a weakref finalizer subtracts it
when the storage is freed. Torch keeps one Python object per live storage, so the finalizer
fires exactly when the memory is released. Parameters and inputs, created before the step, are not
counted: the figure is the step's own peak (activations, recomputed tensors, gradients). The
dispatch mode slows operators down, so memory is measured in separate, untimed steps.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import weakref
from pathlib import Path

import torch
import torch.utils.checkpoint as torch_checkpoint
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import reference_impl  # noqa: E402

IMPLEMENTATIONS = {"reference": reference_impl, "torch": torch_checkpoint}
VARIANTS = {"reentrant": True, "non_reentrant": False}


class Block(nn.Module):
    def __init__(self, width, dropout):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return x + self.down(self.dropout(nn.functional.gelu(self.up(self.norm(x)))))


def build_model(depth, width, dropout, device):
    torch.manual_seed(0)
    return nn.ModuleList(Block(width, dropout) for _ in range(depth)).to(device)


def step(model, x, implementation, use_reentrant):
    for block in model:
        x = implementation.checkpoint(block, x, use_reentrant=use_reentrant)
    x.sum().backward()


class LiveStorageBytes(TorchDispatchMode):
    """Peak bytes of tensor storages created under this mode and still alive (see module doc)."""

    def __init__(self):
        super().__init__()
        self.live = self.peak = 0
        self.tracked = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in tree_leaves(out):
            if isinstance(tensor, torch.Tensor):
                self._track(tensor.untyped_storage())
        return out

    def _track(self, storage):
        key = storage._cdata
        if key in self.tracked:
            return
        self.tracked.add(key)
        self.live += storage.nbytes()
        self.peak = max(self.peak, self.live)
        weakref.finalize(storage, self._release, key, storage.nbytes())

    def _release(self, key, nbytes):
        self.tracked.discard(key)
        self.live -= nbytes


def zero_grads(model):
    for p in model.parameters():
        p.grad = None


def measure_memory(model, x, implementation, use_reentrant, device):
    zero_grads(model)
    if device.type == "cuda":
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step(model, x, implementation, use_reentrant)
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base
    with LiveStorageBytes() as meter:
        step(model, x, implementation, use_reentrant)
    return meter.peak


def timed_step(model, x, implementation, use_reentrant, device):
    zero_grads(model)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    sync()
    start = time.perf_counter()
    step(model, x, implementation, use_reentrant)
    sync()
    return time.perf_counter() - start


def same_gradients(model, x, use_reentrant):
    """Sanity check: both implementations give the same parameter gradients from the same seed."""
    grads = {}
    for name, implementation in IMPLEMENTATIONS.items():
        zero_grads(model)
        torch.manual_seed(1)
        step(model, x, implementation, use_reentrant)
        grads[name] = [p.grad.clone() for p in model.parameters()]
    return all(torch.equal(a, b) for a, b in zip(grads["reference"], grads["torch"]))


def run(args):
    device = torch.device(args.device)
    model = build_model(args.depth, args.width, args.dropout, device)
    x = torch.randn(args.tokens, args.width, device=device, requires_grad=True)
    results = {}
    for variant, use_reentrant in VARIANTS.items():
        times = {name: [] for name in IMPLEMENTATIONS}
        for name, implementation in IMPLEMENTATIONS.items():
            for _ in range(args.warmup):
                timed_step(model, x, implementation, use_reentrant, device)
        order = list(IMPLEMENTATIONS.items())
        for rep in range(args.repetitions):
            for name, implementation in order if rep % 2 == 0 else order[::-1]:
                times[name].append(timed_step(model, x, implementation, use_reentrant, device))
        memory = {name: measure_memory(model, x, impl, use_reentrant, device) for name, impl in IMPLEMENTATIONS.items()}
        median = {name: statistics.median(t) for name, t in times.items()}
        results[variant] = {
            "median_step_s": median,
            "time_ratio": median["reference"] / median["torch"],
            "peak_bytes": memory,
            "memory_ratio": memory["reference"] / memory["torch"],
            "same_gradients": same_gradients(model, x, use_reentrant),
            "samples": {name: len(t) for name, t in times.items()},
        }
    return results


def print_table(results, args):
    print(f"device={args.device} depth={args.depth} width={args.width} tokens={args.tokens} "
          f"dropout={args.dropout} repetitions={args.repetitions}, torch {torch.__version__}")
    header = f"{'variant':<14}{'ref ms':>9}{'torch ms':>10}{'time ratio':>12}{'ref MiB':>10}{'torch MiB':>11}{'mem ratio':>11}  grads equal"
    print(header)
    print("-" * len(header))
    for variant, r in results.items():
        ms, mib = r["median_step_s"], {k: v / 2**20 for k, v in r["peak_bytes"].items()}
        print(f"{variant:<14}{ms['reference'] * 1e3:>9.2f}{ms['torch'] * 1e3:>10.2f}{r['time_ratio']:>12.3f}"
              f"{mib['reference']:>10.2f}{mib['torch']:>11.2f}{r['memory_ratio']:>11.3f}  {r['same_gradients']}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--repetitions", type=int, default=40, help="timed steps per implementation and variant")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if args.device == "cpu":
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", 1)))
    results = run(args)
    print_table(results, args)
    if args.json:
        args.json.write_text(json.dumps({"config": vars(args) | {"json": str(args.json)}, "results": results}, indent=2))


if __name__ == "__main__":
    main()
