"""checkpoint(..., use_reentrant=False) leaves the CPU RNG stream where the recompute left it

colossalai.legacy.utils.activation_checkpoint.checkpoint with use_reentrant=False runs _checkpoint_without_reentrant
(added with hpcaitech/ColossalAI#1460). Its unpack hook sets the CPU RNG state (and its seed manager's states and
mode) back to the forward's for the recompute, and never restores the caller's afterwards, as its reentrant
CheckpointFunction and torch's checkpoint do. After backward the default generator is where the recompute left it:
the random numbers drawn between the forward and the backward are drawn again (repeated dropout masks, data order,
noise), silently.

Documentation: the function is "modified from Pytorch torch.utils.checkpoint" (its docstring) and "preserve[s] the
rng states"; torch's page (https://docs.pytorch.org/docs/stable/checkpoint.html) says: "Checkpointing is
implemented by rerunning a forward-pass segment for each checkpointed segment during backward propagation. This
can cause persistent states like the RNG state to be more advanced than they would without checkpointing. By
default, checkpointing includes logic to juggle the RNG state such that checkpointed passes making use of RNG
(through dropout for example) have deterministic output as compared to non-checkpointed passes."

Steps: pip install --no-deps colossalai==0.5.0 beside psutil, einops, transformers, peft, galore_torch (torch held), then
       python colossalai_non_reentrant_rng_stream.py                                (ColossalAI: exits 1)
       python colossalai_non_reentrant_rng_stream.py --impl torch.utils.checkpoint  (torch, use_reentrant=False: exits 0)
  The checkpoint needs its seed manager to have a current mode: the script adds ParallelMode.DATA's seed and makes it
  current, as colossalai.legacy's launch does. ColossalAI's seed manager reads CUDA's RNG at every call: on a machine
  without CUDA the script gives its two RNG modules a torch whose cuda.get_rng_state returns an empty tensor and
  whose cuda.set_rng_state and cuda.manual_seed do nothing (the CPU RNG handling, where the bug is, is untouched);
  with CUDA nothing is stubbed.
Expected: after backward, the next torch.rand equals the un-checkpointed run's (the stream is restored).
Actual (colossalai 0.5.0, torch 2.13.0, CPU): the next torch.rand repeats the draw made between forward and backward.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.metadata
import platform
import sys

import torch

PACKAGE = "colossalai.legacy.utils.activation_checkpoint"
LAUNCH_SEED = 1024  # colossalai.legacy.launch's default seed


class _Delegate:
    """``target`` with some attributes replaced."""

    def __init__(self, target, **replaced):
        self._target = target
        self.__dict__.update(replaced)

    def __getattr__(self, name):
        return getattr(self._target, name)


def checkpoint_from(name: str):
    module = importlib.import_module(name)
    if name != PACKAGE:
        return functools.partial(module.checkpoint, use_reentrant=False)
    print(f"colossalai {importlib.metadata.version('colossalai')}")
    random = importlib.import_module("colossalai.legacy.context.random")
    if not torch.cuda.is_available():
        cuda = _Delegate(torch.cuda, get_rng_state=lambda *args, **kwargs: torch.empty(0, dtype=torch.uint8),
                         set_rng_state=lambda *args, **kwargs: None, manual_seed=lambda *args, **kwargs: None)
        for rng_module in ("colossalai.legacy.context.random._helper", "colossalai.legacy.context.random.seed_manager"):
            importlib.import_module(rng_module).torch = _Delegate(torch, cuda=cuda)
    data = importlib.import_module("colossalai.legacy.context.parallel_mode").ParallelMode.DATA
    if data not in random.get_seeds():
        random.add_seed(data, LAUNCH_SEED)
        random.set_mode(data)
    return lambda function, *args: module.checkpoint(function, False, *args, use_reentrant=False)  # no offload


def draw_after_backward(checkpoint=None):
    """The draw between forward and backward and the one after backward, from seed 0 (no checkpoint: None)."""
    x = torch.randn(8, generator=torch.Generator().manual_seed(1), requires_grad=True)
    torch.manual_seed(0)
    out = (checkpoint or (lambda function, *args: function(*args)))(lambda t: torch.nn.functional.dropout(t, 0.5), x)
    between = torch.rand(3)
    out.sum().backward()
    return between, torch.rand(3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default=PACKAGE, help=f"{PACKAGE} (default) or torch.utils.checkpoint")
    name = parser.parse_args().impl
    checkpoint = checkpoint_from(name)
    print(f"torch {torch.__version__}, Python {platform.python_version()}, checkpoint: {name}")

    _, plain_after = draw_after_backward()
    between, after = draw_after_backward(checkpoint)
    print(f"expected: the draw after backward is the un-checkpointed run's, {plain_after.tolist()}")
    if torch.equal(after, plain_after):
        print("actual:   as expected")
        return 0
    repeated = " (it repeats the draw made between forward and backward)" if torch.equal(after, between) else ""
    print(f"actual:   {after.tolist()}{repeated}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
