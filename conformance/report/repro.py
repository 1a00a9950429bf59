"""How to reproduce one finding: the shell command that reruns exactly that test against that
implementation, and where the test's source is. Derived from the record's node id alone (the
results schema needs no new field)."""

from __future__ import annotations

import re
import shlex
from functools import cache
from pathlib import Path

from conformance.data.results import Record
from conformance.data.vocabulary import VARIANTS

CHECKOUT = Path(__file__).resolve().parents[2]


def repro_command(record: Record, implementation: str) -> str:
    """``python -m pytest -p conformance.plugin --pyargs 'conformance.suite.<module>::<test>' --impl=...
    --variant=... --device=...``, quoted for a POSIX shell. It reruns the test wherever the harness is importable,
    in its checkout or installed (the README's two ways to run it), and names no path of the machine that ran it
    (a published report's commands must not). ``-p`` loads the plugin where no configuration does (a checkout's
    pyproject.toml does too: pytest loads a plugin once)."""
    path, _, test = record.nodeid.partition("::")
    args = ["python", "-m", "pytest", "-p", "conformance.plugin", "--pyargs", f"conformance.suite.{Path(path).stem}::{test}",
            f"--impl={implementation}"]
    variant = variant_of(record.nodeid) or record.variant
    if variant:
        args.append(f"--variant={variant}")
    if record.device:
        args.append(f"--device={record.device}")
    return shlex.join(args)


def variant_of(nodeid: str) -> str | None:
    """The variant a test ran in, from its parameters (a record may be charged to another: a nested region's)."""
    params = nodeid.rpartition("[")[2].rstrip("]").split("-") if nodeid.endswith("]") else []
    return next((v for v in VARIANTS if v in params), None)


def source_location(nodeid: str, root: Path = CHECKOUT) -> str:
    """``path:line`` of the test function's ``def`` (just ``path`` when the file is not here)."""
    path, _, rest = nodeid.partition("::")
    function = rest.split("::")[-1].split("[")[0]
    line = _def_line(str(root / path), function)
    return f"{path}:{line}" if line else path


@cache
def _def_line(path: str, function: str) -> int | None:
    pattern = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(function)}\s*\(")
    try:
        with open(path, encoding="utf-8") as f:
            return next((n for n, line in enumerate(f, 1) if pattern.match(line)), None)
    except OSError:
        return None
