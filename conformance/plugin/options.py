"""The command-line options ``pytest`` (with conformance/plugin/__init__.py) and ``python -m conformance run`` share,
declared once.

A pytest run tests one implementation, one variant or both, one device or all; ``run`` makes a matrix of
runs, so there ``--impl``, ``--variant`` and ``--device`` are repeatable (each value a run of its own) and
``--device`` defaults to cpu. ``add`` is pytest's ``parser.getgroup(...).addoption`` or argparse's
``add_argument``: both take argparse's keywords.
"""

from __future__ import annotations

from conformance.data.ids import DEFAULT_IMPL
from conformance.data.vocabulary import DEVICES, VARIANTS


def declare(add, *, matrix: bool = False) -> None:
    def repeatable(default):
        return {"action": "append"} if matrix else {"default": default}

    add("--impl", metavar="MODULE", **({"action": "append", "required": True} if matrix else {"default": None}),
        help="implementation under test: an importable module exposing the torch.utils.checkpoint API, or an "
        f"adapter's short name{' (repeatable)' if matrix else f' (default: {DEFAULT_IMPL})'}")
    add("--variant", choices=(*VARIANTS, "both"), **repeatable("both"),
        help=f"which use_reentrant variant(s) to test{', each in its own run (repeatable)' if matrix else ''} "
        "(default: both)")
    add("--device", choices=(*DEVICES, "all"), **repeatable(None),
        help=f"devices for device-parametrized tests{', each in its own run (repeatable)' if matrix else ''}; 'all' "
        f"records CUDA's tests as skipped where CUDA is absent (default: {'cpu' if matrix else 'the devices present'})")
    add("--clause", action="append", default=[], metavar="ID",
        help="run only the tests of this clause id or area id (repeatable; `python -m conformance clauses` lists them)")
    add("--strict-levels", action="store_true", default=False,
        help="fail the run on failing tests of SHOULD, MAY and OBSERVED clauses too (by default only a MUST binds: "
        "those read 'SHOULD unmet' / 'differs from torch' and leave the exit status alone)")


def devices(value: str | None) -> tuple[str, ...]:
    """The devices a pytest run's --device names: one, every one ("all"), or by default those present (CUDA where
    torch finds it): a CPU-only machine's run records no column of CUDA skips."""
    if value == "all":
        return DEVICES
    if value is not None:
        return (value,)
    import torch

    return tuple(d for d in DEVICES if d == "cpu" or torch.cuda.is_available())
