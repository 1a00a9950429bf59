"""Benchmark: reference_impl against torch.utils.checkpoint, same workload, same process.

    python benchmarks/compare_torch.py [--device cuda] [--json out.json]

Workload: a stack of transformer-style MLP blocks (LayerNorm, Linear d->4d, GELU, Dropout,
Linear 4d->d, residual), or with ``--block linear`` of plain blocks (Linear d->d, GELU, Dropout:
the region ends in a dropout, whose product with its mask early stop must not compute), each block
checkpointed; one step = forward, sum, backward. Runs: both
variants (reentrant, non-reentrant), and two of selective checkpointing (non-reentrant, each
implementation's own create_selective_checkpoint_contexts): ``selective`` saves the outputs of the
matmuls (aten.addmm, MUST_SAVE) and recomputes the rest; ``offload`` gives them MUST_CPU_OFFLOAD
instead. The two implementations take turns step by step, in an order that alternates
(AB BA AB ...), so drift in machine load hits both alike.

Reported per run: the median step time of each implementation and their ratio (reference / torch,
goal <= 1.05), and the peak memory of one step and its ratio (goal <= 1.00). For ``offload`` the peak
is given for the device and for the CPU apart; it has no goal against torch, whose eager mode
recomputes *_CPU_OFFLOAD outputs instead of offloading them (pytorch/pytorch#185015). On a CPU-only
machine the two are one: offloading to the CPU moves nothing.

Time. Wall-clock by default; ``--clock thread`` takes the CPU time of the benchmark's thread
instead (CPU only, one thread), which other processes on a shared machine disturb far less.

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
import functools
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

aten = torch.ops.aten

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import reference_impl  # noqa: E402

IMPLEMENTATIONS = {"reference": reference_impl, "torch": torch_checkpoint}
# run -> (use_reentrant, the CheckpointPolicy of the matmuls' outputs under selective checkpointing)
RUNS = {
    "reentrant": (True, None),
    "non_reentrant": (False, None),
    "selective": (False, "MUST_SAVE"),
    "offload": (False, "MUST_CPU_OFFLOAD"),
}


class Block(nn.Module):
    def __init__(self, width, dropout):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return x + self.down(self.dropout(nn.functional.gelu(self.up(self.norm(x)))))


def linear_block(width, dropout):
    return nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Dropout(dropout))


BLOCKS = {"mlp": Block, "linear": linear_block}


def build_model(depth, width, dropout, device, block="mlp"):
    torch.manual_seed(0)
    return nn.ModuleList(BLOCKS[block](width, dropout) for _ in range(depth)).to(device)


def selective_context_fn(implementation, matmul_policy):
    """The implementation's selective checkpointing: matmul outputs get matmul_policy, the rest is recomputed."""
    policies = implementation.CheckpointPolicy

    def policy(ctx, op, *args, **kwargs):
        return getattr(policies, matmul_policy) if op == aten.addmm.default else policies.PREFER_RECOMPUTE

    return functools.partial(implementation.create_selective_checkpoint_contexts, policy)


def step(model, x, implementation, run):
    use_reentrant, matmul_policy = RUNS[run]
    options = {"context_fn": selective_context_fn(implementation, matmul_policy)} if matmul_policy else {}
    for block in model:
        x = implementation.checkpoint(block, x, use_reentrant=use_reentrant, **options)
    x.sum().backward()


class LiveStorageBytes(TorchDispatchMode):
    """Peak bytes of tensor storages created under this mode and still alive (see module doc): in all,
    and per device type (``peak_on``)."""

    def __init__(self):
        super().__init__()
        self.live = self.peak = 0
        self.live_on, self.peak_on = {}, {}
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
        device = storage.device.type
        self.live += storage.nbytes()
        self.peak = max(self.peak, self.live)
        self.live_on[device] = self.live_on.get(device, 0) + storage.nbytes()
        self.peak_on[device] = max(self.peak_on.get(device, 0), self.live_on[device])
        weakref.finalize(storage, self._release, key, device, storage.nbytes())

    def _release(self, key, device, nbytes):
        self.tracked.discard(key)
        self.live -= nbytes
        self.live_on[device] -= nbytes


def zero_grads(model):
    for p in model.parameters():
        p.grad = None


def measure_memory(model, x, implementation, run, device):
    """Peak bytes of one step: {"device": ..., "cpu": ...} (the same figure on a CPU-only run)."""
    zero_grads(model)
    if device.type == "cuda":
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        with LiveStorageBytes() as meter:  # for the CPU side only: the allocator counts the device's
            step(model, x, implementation, run)
        torch.cuda.synchronize()
        return {"device": torch.cuda.max_memory_allocated() - base, "cpu": meter.peak_on.get("cpu", 0)}
    with LiveStorageBytes() as meter:
        step(model, x, implementation, run)
    return {"device": meter.peak, "cpu": meter.peak}


CLOCKS = {"wall": time.perf_counter, "thread": time.thread_time}


def timed_step(model, x, implementation, run, device, clock="wall"):
    zero_grads(model)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    now = CLOCKS[clock]
    sync()
    start = now()
    step(model, x, implementation, run)
    sync()
    return now() - start


def same_gradients(model, x, run):
    """Sanity check: both implementations give the same parameter gradients from the same seed."""
    grads = {}
    for name, implementation in IMPLEMENTATIONS.items():
        zero_grads(model)
        torch.manual_seed(1)
        step(model, x, implementation, run)
        grads[name] = [p.grad.clone() for p in model.parameters()]
    return all(torch.equal(a, b) for a, b in zip(grads["reference"], grads["torch"]))


def run(args):
    device = torch.device(args.device)
    model = build_model(args.depth, args.width, args.dropout, device, args.block)
    x = torch.randn(args.tokens, args.width, device=device, requires_grad=True)
    results = {}
    for run_name in args.runs:
        times = {name: [] for name in IMPLEMENTATIONS}
        for name, implementation in IMPLEMENTATIONS.items():
            for _ in range(args.warmup):
                timed_step(model, x, implementation, run_name, device, args.clock)
        order = list(IMPLEMENTATIONS.items())
        for rep in range(args.repetitions):
            for name, implementation in order if rep % 2 == 0 else order[::-1]:
                times[name].append(timed_step(model, x, implementation, run_name, device, args.clock))
        memory = {name: measure_memory(model, x, impl, run_name, device) for name, impl in IMPLEMENTATIONS.items()}
        median = {name: statistics.median(t) for name, t in times.items()}
        results[run_name] = {
            "median_step_s": median,
            "time_ratio": median["reference"] / median["torch"],
            "peak_bytes": {name: m["device"] for name, m in memory.items()},
            "peak_cpu_bytes": {name: m["cpu"] for name, m in memory.items()},
            "memory_ratio": memory["reference"]["device"] / memory["torch"]["device"],
            "same_gradients": same_gradients(model, x, run_name),
            "samples": {name: len(t) for name, t in times.items()},
        }
    return results


def print_table(results, args):
    print(f"device={args.device} block={args.block} depth={args.depth} width={args.width} tokens={args.tokens} "
          f"dropout={args.dropout} repetitions={args.repetitions} clock={args.clock}, torch {torch.__version__}")
    header = (f"{'run':<14}{'ref ms':>9}{'torch ms':>10}{'time ratio':>12}{'ref MiB':>10}{'torch MiB':>11}"
              f"{'mem ratio':>11}{'ref CPU MiB':>13}{'torch CPU MiB':>15}  grads equal")
    print(header)
    print("-" * len(header))
    for run_name, r in results.items():
        ms, mib = r["median_step_s"], {k: v / 2**20 for k, v in r["peak_bytes"].items()}
        cpu = {k: v / 2**20 for k, v in r["peak_cpu_bytes"].items()}
        print(f"{run_name:<14}{ms['reference'] * 1e3:>9.2f}{ms['torch'] * 1e3:>10.2f}{r['time_ratio']:>12.3f}"
              f"{mib['reference']:>10.2f}{mib['torch']:>11.2f}{r['memory_ratio']:>11.3f}"
              f"{cpu['reference']:>13.2f}{cpu['torch']:>15.2f}  {r['same_gradients']}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--block", choices=list(BLOCKS), default="mlp")
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--repetitions", type=int, default=40, help="timed steps per implementation and variant")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--clock", choices=list(CLOCKS), default="wall",
                        help="wall: elapsed time; thread: CPU time of this thread (CPU only; robust on a shared machine)")
    parser.add_argument("--runs", nargs="+", choices=list(RUNS), default=list(RUNS), help="which runs (default: all)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if args.clock == "thread" and args.device != "cpu":
        parser.error("--clock thread measures CPU work only: use it with --device cpu")
    if args.device == "cpu":
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", 1)))
    results = run(args)
    print_table(results, args)
    if args.json:
        args.json.write_text(json.dumps({"config": vars(args) | {"json": str(args.json)}, "results": results}, indent=2))


if __name__ == "__main__":
    main()
