"""``python -m conformance clauses``: the clause and area ids a user can pass to ``--clause``, and the nearest id
for one that names nothing (issue 34, item 9)."""

import pytest

from conformance.__main__ import main
from conformance.data.registry import load_areas, load_clauses, unknown_ids

CLAUSES = load_clauses()


def clauses_command(capsys, *args) -> tuple[int, str, str]:
    status = main(["clauses", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_listing_names_every_area_and_every_clause_with_its_level_variants_and_title(capsys):
    status, out, err = clauses_command(capsys)
    assert status == 0 and not err
    lines = out.splitlines()
    for area, title in load_areas().items():
        assert any(line.startswith(f"{area}: {title} (") for line in lines), area
    for clause in CLAUSES.values():
        row = next(line for line in lines if line.split()[:1] == [clause.id])
        assert clause.level in row.split() and row.endswith(clause.title), row
        assert ("both variants" in row) == (len(clause.variants) == 2), row
    assert clause.text not in out, "the full listing shows titles, not texts"


def test_an_area_lists_only_its_clauses_with_their_texts_and_sources(capsys):
    status, out, _ = clauses_command(capsys, "rng")
    rng = [c for c in CLAUSES.values() if c.area == "rng"]
    assert status == 0 and rng
    listed = {line.split()[0] for line in out.splitlines() if line.startswith("  ") and not line.startswith("      ")}
    assert listed == {c.id for c in rng}
    flat = " ".join(out.split())
    for clause in rng:
        assert " ".join(clause.text.split()) in flat and clause.source_label in flat


def test_a_clause_shows_its_note_and_a_docstring_source_reads_as_one(capsys):
    clause = next(c for c in CLAUSES.values() if c.note and c.source.startswith("docstring:"))
    status, out, _ = clauses_command(capsys, clause.id)
    flat = " ".join(out.split())
    assert status == 0 and " ".join(clause.note.split()) in flat
    assert f"source: {clause.source_label}" in flat and clause.source_label.startswith("torch ")


@pytest.mark.parametrize("typed, hint", [
    ("rng.stream-restord", "did you mean 'rng.stream-restored'?"),  # a near miss of a clause id
    ("rgn", "did you mean 'rng'?"),  # of an area id
    ("rng.bogus", "no such clause in area 'rng'; list them with: python -m conformance clauses rng"),
    ("nowhere", "the areas are api, rng,"),  # an unknown area, near nothing
])
def test_an_unknown_id_is_refused_with_the_nearest_one_or_where_to_look(capsys, typed, hint):
    problems = unknown_ids([typed, "rng", "rng.stream-restored"])  # known ids are no problem
    assert len(problems) == 1 and problems[0].startswith(f"{typed!r} ({hint}"), problems
    status, out, err = clauses_command(capsys, typed)
    assert status == 2 and not out
    assert err.startswith(f"python -m conformance clauses: unknown clause or area id(s): {typed!r} ({hint}"), err


def test_run_refuses_an_unknown_clause_before_it_starts_a_run(capsys, tmp_path):
    status = main(["run", "--impl", "reference_impl", "--clause=rng.stream-restord", "--out", str(tmp_path)])
    _, err = capsys.readouterr()
    assert status == 2 and "--clause: unknown clause or area id(s): 'rng.stream-restord'" in err
    assert "did you mean 'rng.stream-restored'?" in err and not any(tmp_path.iterdir())
