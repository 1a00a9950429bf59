"""torch's own checkpoint tests as a floor (issue 44, docs/UPSTREAM_TESTS.md): each one that runs on CPU names a
mutant of the project's own that it fails (the mutant's UPSTREAM_TESTS), and tests/zoo/test_mutants.py shows the suite
flags that mutant too. That each upstream test does fail on its mutant needs torch's test files, which the project
does not ship: benchmarks/upstream_floor.py measures it (docs/MEASUREMENTS.md). Here: the page and the mutants say
the same, and no upstream test the page maps is left without a mutant or a reason."""

import re
from pathlib import Path

from tests.mutants import mutant_names, upstream_floor

PAGE = Path(__file__).resolve().parents[2] / "docs" / "UPSTREAM_TESTS.md"
FLOOR_SECTION = "## The floor"


def _sections() -> tuple[str, str]:
    """(the page before the floor's section, the floor's section)."""
    text = PAGE.read_text()
    start = text.index(FLOOR_SECTION)
    end = text.find("\n## ", start + 1)
    return text[:start], text[start:end if end > 0 else None]


def floor_rows() -> dict[str, str]:
    """{upstream test id: its floor mutant (a name in backticks) or why it has none} from the floor's table."""
    rows = {}
    for line in _sections()[1].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`test_"):
            rows[cells[0].strip("`")] = cells[1]
    return rows


def test_the_floor_table_and_the_mutants_name_the_same_pairs():
    declared = {(test, f"`{mutant}`") for mutant, tests in upstream_floor().items() for test in tests}
    tabled = {(test, cell) for test, cell in floor_rows().items() if cell.startswith("`")}
    assert declared == tabled, (f"named by a mutant, not in the page's floor table: {sorted(declared - tabled)}; "
                                f"in the table, not named by that mutant: {sorted(tabled - declared)}")


def test_each_upstream_test_the_page_maps_has_a_floor_row():
    """Every upstream test in the page's tables (by method name) has a row: a mutant, or why none can be."""
    mapped = set(re.findall(r"^\| (test_\w+)", _sections()[0], flags=re.MULTILINE))
    rows = floor_rows()
    floored = {test.split("::")[-1] for test in rows}
    missing = sorted(m for m in mapped if not any(f == m or f.startswith(m + "_") for f in floored))
    assert mapped and not missing, f"upstream tests the page maps without a floor row: {missing}"
    reasonless = [test for test, cell in rows.items() if not cell.startswith("`") and len(cell) < 20]
    assert not reasonless, f"floor rows with neither a mutant nor a reason: {reasonless}"


def test_floor_mutants_exist_and_name_upstream_tests_by_file_class_and_method():
    known = set(mutant_names())
    for mutant, tests in upstream_floor().items():
        assert mutant in known
        for test in tests:
            assert re.fullmatch(r"test_(utils|autograd)\.py::Test\w+::test_\w+", test), (mutant, test)
