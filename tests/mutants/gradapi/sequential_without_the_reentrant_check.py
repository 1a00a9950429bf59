"""checkpoint_sequential built over a reentrant checkpoint (an autograd.Function that recomputes and runs an
inner backward) that lacks the check for torch.autograd.grad, in both variants; checkpoint itself is
torch's. Under use_reentrant=True torch.autograd.grad through it is not refused (the inner backward
accumulates into .grad instead); under use_reentrant=False it cannot give gradients of the parameters
inside nor of second order (torch's test_checkpoint_valid, test/test_utils.py)."""

from conformance.adapters._support import sequential_over
from tests.mutants._support.base import *  # noqa: F403  (torch's whole surface; one name is broken below)
from tests.mutants._support.mini_reentrant import Switches, reentrant_checkpoint

TARGET_CLAUSES = ["gradapi.reentrant-rejects-grad", "gradapi.non-reentrant-grad"]
BREAKS = "checkpoint_sequential: an inner-backward checkpoint without the autograd.grad check, in both variants"

checkpoint_sequential = sequential_over(reentrant_checkpoint(Switches(reject_grad_and_inputs=False)))
