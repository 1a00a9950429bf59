"""How to reproduce one finding: the shell command that reruns exactly that test against that
implementation, and where the test's source is. Derived from the record's node id alone (the
results schema needs no new field); commands are for a shell in the harness's checkout."""

from __future__ import annotations

import re
import shlex
from functools import cache
from pathlib import Path

from conformance.results import Record

CHECKOUT = Path(__file__).resolve().parents[2]


def repro_command(record: Record, implementation: str, interpreter: str | None = None) -> str:
    """``<python> -m pytest '<nodeid>' --impl=... --variant=... --device=...``, quoted for a POSIX shell. The
    interpreter is the one that ran the test (its results header says which: a tox env's, say, which is not on
    PATH), else ``python``."""
    args = [interpreter or "python", "-m", "pytest", record.nodeid, f"--impl={implementation}"]
    if record.variant:
        args.append(f"--variant={record.variant}")
    if record.device:
        args.append(f"--device={record.device}")
    return shlex.join(args)


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
