"""Where a test's standalone reproducer script goes, and how its record names it.

Beside the results file ``R.json``, in ``R-reproducers/``; a record names its script relative to the results
file's folder (``R-reproducers/<test>.py``), so that the two travel together and ``report`` links the script.
``python -m conformance run`` writes each run's results file itself, merged from those of its lanes (in a
temporary folder, removed with the run), so it tells each lane's pytest the folder beside the run's own
results file (``--conformance-reproducers``). A pytest run without ``--results`` writes its scripts into
``reports/reproducers/<implementation>/`` (vocabulary.OUTPUT_DIR: git ignores it).

Plain paths: it imports the vocabulary only.
"""

from __future__ import annotations

import re
from pathlib import Path

from conformance.data.vocabulary import OUTPUT_DIR, REPRODUCERS


def beside(results: Path) -> Path:
    """The reproducers folder of the results file ``results``."""
    results = Path(results)
    return results.with_name(f"{results.stem}-{REPRODUCERS}")


def folder(given: str | None, results: str | None, impl: str, invoked_in: Path) -> Path:
    """Where a pytest run writes its scripts: the folder ``run`` gave, else beside ``--results``, else the
    implementation's folder under OUTPUT_DIR (relative paths from where pytest was invoked)."""
    if given:
        return invoked_in / given
    if results:
        return beside(invoked_in / results)
    return invoked_in / OUTPUT_DIR / REPRODUCERS / impl


def write(into: Path, test_name: str, source: str) -> tuple[Path, str]:
    """Write ``source`` as the script of the test ``test_name``: its path, and the path its record names
    (relative to the folder the reproducers folder is in, where the results file is)."""
    into.mkdir(parents=True, exist_ok=True)
    script = into / (re.sub(r"[^A-Za-z0-9._-]+", "_", test_name).strip("_") + ".py")
    script.write_text(source, encoding="utf-8")
    return script, script.relative_to(into.parent).as_posix()
