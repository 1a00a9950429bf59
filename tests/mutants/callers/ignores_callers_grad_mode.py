"""Forces grad on (and inference mode off) around the checkpoint, whatever the caller's mode."""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.base import checkpoint as _checkpoint

TARGET_CLAUSES = ["callers.no-grad", "callers.inference-mode"]
BREAKS = "under torch.no_grad()/inference_mode() the output still requires grad"


def checkpoint(function, *args, **kwargs):
    with torch.inference_mode(False), torch.enable_grad():
        return _checkpoint(function, *args, **kwargs)
