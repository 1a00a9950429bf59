"""DeepSpeed's activation checkpointing with ``deepspeed.checkpointing.configure(...)`` options set, as a
training script that turns them on runs it: after a distributed init, with a model-parallel unit.

On one CPU process that is a single-rank gloo group (an in-memory store, no network) and a model-parallel
unit of one rank. The first ``deepspeed.init_distributed`` JIT-builds a small shared-memory extension
(minutes; tox caches it in the env via TORCH_EXTENSIONS_DIR): it is built when this module is imported,
before any test's clock starts. Built inside the first test, the per-test limit killed the build again
and again, and the lock file each killed build left behind made every later build wait forever.
DeepSpeed prints on every init: that output is swallowed so that it cannot land in a test's captured output.
"""

from __future__ import annotations

import contextlib
import functools
import io

from conformance.adapters import deepspeed as plain_deepspeed
from conformance.adapters._support import require


class SingleRankParallelUnit:
    """The ``mpu`` DeepSpeed asks for: model and data parallelism over the one rank of the world group."""

    def _world(self):
        return require("torch.distributed", "torch").group.WORLD

    def get_model_parallel_rank(self):
        return 0

    def get_model_parallel_world_size(self):
        return 1

    def get_model_parallel_group(self):
        return self._world()

    get_data_parallel_rank = get_model_parallel_rank
    get_data_parallel_world_size = get_model_parallel_world_size
    get_data_parallel_group = get_model_parallel_group


def build_extension() -> None:
    """Build (or load the cached) shared-memory extension that ``deepspeed.init_distributed`` needs."""
    try:
        from deepspeed.accelerator import get_accelerator
    except ImportError:
        return  # not installed: the first call says how to install it (require)
    with contextlib.redirect_stdout(io.StringIO()):
        get_accelerator().create_op_builder("ShareMemCommBuilder").load()


@functools.cache
def configure(**options) -> None:
    """Initialise a single-rank gloo group and DeepSpeed once per process, then configure checkpointing."""
    import torch.distributed as dist

    deepspeed = require("deepspeed", "deepspeed==0.19.8 (DS_BUILD_OPS=0)")
    with contextlib.redirect_stdout(io.StringIO()):
        if not dist.is_initialized():
            dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())
        deepspeed.init_distributed(dist_backend="gloo")
        plain_deepspeed._checkpointing().configure(SingleRankParallelUnit(), **options)


def configured_checkpoint(**options):
    """The plain DeepSpeed adapter's ``checkpoint``, run with these configure() options in force."""
    build_extension()

    def checkpoint(function, *args, **kwargs):
        configure(**options)
        return plain_deepspeed.checkpoint(function, *args, **kwargs)

    return checkpoint
