"""For the recompute, a tensor argument that is a view (`arg._base is not None`) is rebuilt from its base's storage
with `as_strided(arg.size(), arg.stride())`, so its own `storage_offset()` is dropped and the base's is used. The
same thing happened in axolotl#3878, where checkpoint offload restored sliced views at the wrong offset and got the
wrong elements. The bug shows only for view arguments whose storage offset differs from their base's, such as
`checkpoint(f, base[1:])` or `base[:, 2:]`. Views at offset 0 (`x[:3]`, `x.t()`, `x.view(...)`) and ordinary tensors
are unaffected. The forward value is right, because the forward runs on the real argument. The recompute runs on
the elements at the start of the storage, so for a nonlinear `f` (`x ** 2`, `x.sin()`) the gradients reaching the
view and its base are wrong. Under the reentrant variant they also land on shifted positions.

Report: https://github.com/axolotl-ai-cloud/axolotl/pull/3878 (axolotl-ai-cloud/axolotl#3878)
"""

import torch

from tests.mutants._support.base import *  # noqa: F403  (torch's whole checkpoint surface; one behaviour broken below)
from tests.mutants._support.base import checkpoint as _checkpoint
from tests.mutants._support.call_wrappers import on_calls

REPORT = "axolotl-ai-cloud/axolotl#3878"
KIND = "parameter-or-tensor-identity"
BREAKS = "a view argument with a nonzero storage offset is recomputed on the wrong elements: wrong gradients"


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    # Views among the arguments, and the offset they get back in the recompute: their base's, not their own.
    rebuilt_at = {i: a._base.storage_offset() for i, a in enumerate(args)
                  if isinstance(a, torch.Tensor) and a._base is not None}

    def around(call, function, *args, **kwargs):
        if call > 0:
            args = [torch.as_strided(a, a.size(), a.stride(), rebuilt_at[i]) if i in rebuilt_at else a
                    for i, a in enumerate(args)]
        return function(*args, **kwargs)

    return _checkpoint(on_calls(function, around), *args, use_reentrant=use_reentrant, **kwargs)


def witness(api):
    results = []
    for reentrant in (True, False):
        base = torch.arange(1.0, 7.0).requires_grad_()
        out = api.checkpoint(lambda t: t ** 2, base[2:], use_reentrant=reentrant)
        out.sum().backward()
        results.append((tuple(out.tolist()), tuple(base.grad.tolist())))
    return tuple(results)
