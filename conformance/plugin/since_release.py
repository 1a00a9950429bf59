"""Clauses that hold only since a torch release: on an older torch their tests read "not in this release".

A clause's ``since = "x.y"`` (clauses.toml) names the first torch release whose documented contract
has it (the ``early_stop`` keyword since 2.9, ``GraphExecGroup`` since 2.10, ...). Testing an older
torch against it would report the absence of a later feature as a failure; the test is skipped instead,
saying so. The installed torch is the release under test: every adapter runs on it.

Registered by conformance/plugin/__init__.py.
"""

from __future__ import annotations

import pytest
import torch
from torch.torch_version import TorchVersion

from conformance.data.facts import clause_ids_of
from conformance.data.registry import load_clauses
from conformance.data.vocabulary import release_of


def newer_clauses(clause_ids, torch_version: str = torch.__version__) -> list[tuple[str, str]]:
    """(clause id, since) of the clauses that came after ``torch_version``."""
    clauses = load_clauses()
    installed = TorchVersion(torch_version)
    return [(cid, clauses[cid].since) for cid in clause_ids
            if cid in clauses and clauses[cid].since and installed < clauses[cid].since]


# checkpoint's own keywords newer than some release the suite is run on, each by the clause that documents
# it: the keyword exists since that clause's ``since``.
KEYWORD_CLAUSES = {"early_stop": "earlystop.keyword-disables"}


def has_keyword(keyword: str, torch_version: str = torch.__version__) -> bool:
    """Whether the installed torch release's checkpoint has this keyword of its own."""
    clause = KEYWORD_CLAUSES.get(keyword)
    return clause is None or not newer_clauses([clause], torch_version)


def pytest_runtest_setup(item):
    newer = newer_clauses(clause_ids_of(item))
    if newer:
        holds = ", ".join(f"{cid} holds since {since}" for cid, since in newer)
        pytest.skip(f"not in torch {release_of(torch.__version__)}: {holds}")
