"""Where each page of a report lives, and the relative links between them.

A report is an index page (``-o compatibility.html``) and its detail pages in a folder beside it
(``compatibility-details/``): one page per implementation, one per area, the sweeps, the changes
since a baseline and the findings a maintainer can file (with copies of their scripts). Every path here is relative to the index's folder and every link is relative to the
page it is on, so the index and its folder can be published anywhere as they are.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import quote

from conformance.report.model import Matrix

DETAILS_SUFFIX = "-details"  # not the bare stem: `-o reports/builtin.html` must not write into the results folder


@dataclass(frozen=True)
class Layout:
    index: str  # the index's file name, e.g. "compatibility.html"
    implementations: dict[str, str]  # implementation label -> its page
    areas: dict[str, str]  # area id -> its page, for the areas with a tested clause
    sweeps: str
    changes: str
    findings: str  # the findings a maintainer can file (findings/findings.toml), when the report is given them

    @classmethod
    def of(cls, matrix: Matrix, index: str) -> Layout:
        details = details_of(index)
        taken: set[str] = set()
        implementations = {label: _page(details, "impl-", label, taken) for label in matrix.implementations}
        areas = {area.id: _page(details, "area-", area.id, taken) for area in matrix.areas if area.tested}
        return cls(index, implementations, areas, f"{details}/sweeps.html", f"{details}/changes.html",
                   f"{details}/findings.html")

    def href(self, here: str, to: str, anchor: str | None = None) -> str:
        """The link from page ``here`` to page ``to`` (to an element of it, with ``anchor``)."""
        path = "" if to == here else quote(posixpath.relpath(to, posixpath.dirname(here) or "."))
        return path + ("#" + quote(anchor, safe="") if anchor else "")


def finding_script(index: str, name: str) -> str:
    """Where the site keeps its copy of a finding's script (the findings page links to it): published with the
    pages, since a link into the repository would not survive publishing."""
    return f"{details_of(index)}/findings/{name}"


def details_of(index: str) -> str:
    """The folder of the detail pages of the index ``index`` (a file name), beside it."""
    return posixpath.splitext(index)[0] + DETAILS_SUFFIX


def _page(details: str, prefix: str, name: str, taken: set[str]) -> str:
    """``details/<prefix><slug>.html``, unique among ``taken`` without regard to case (macOS, Windows)."""
    slug = prefix + (re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "unnamed")
    candidate, n = slug, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{slug}-{n}"
    taken.add(candidate.lower())
    return f"{details}/{candidate}.html"
