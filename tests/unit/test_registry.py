"""The clause registry is well formed, faithful to its sources, and every MUST clause is tested."""

import hashlib
import importlib
import re
import tomllib
import subprocess
from pathlib import Path

import pytest

from conformance.data.facts import clause_ids_of
from conformance.data.datafiles import DataFileError
from conformance.data.registry import load_areas, load_clauses

REPO = Path(__file__).resolve().parents[2]
CLAUSES = load_clauses()

# A clause cites a public page; its quote is checked against a local copy of that page where one lies beside
# the checkout (in this project's workspace, ../shared/spec-sources/, which is no part of the project: a clone
# has no such folder, and nothing the project ships names it). This mapping is the one place that knows it.
LOCAL_COPIES = REPO.parent / "shared" / "spec-sources"
LOCAL_COPY_OF = {
    "https://github.com/pytorch/pytorch/pull/6526": "000_bbbd0187d5f925b5.txt",
    "https://pytorch.org/docs/1.0.0/_modules/torch/utils/checkpoint.html": "001_9f845fb8b9447386.txt",
    "https://github.com/pytorch/pytorch/pull/14518": "004_a4d707ec644d0b5b.txt",
    "https://pytorch.org/docs/2.1/checkpoint.html": "003_eefe60a5eccdd618.txt",
}


def normalized(text: str) -> str:
    """Compare prose, not markup: drop reST/markdown quoting and collapse whitespace."""
    text = re.sub(r":(attr|func|class|meth):", "", text)
    text = re.sub(r"-\n\s*", "-", text)  # a hyphenated word broken across lines
    text = text.replace("``", "").replace("`", "").replace("\\", "")
    return " ".join(text.split())


def source_text(source: str) -> str | None:
    """The text a clause's source holds: the installed torch's docstring of the object named, or the local copy of
    the page at the address (None where there is none: a clone)."""
    if source.startswith("docstring:"):
        _, requirement, dotted = source.split(":", 2)
        module_name, _, attr = dotted.rpartition(".")
        return importlib.import_module(module_name).__dict__[attr].__doc__ or ""
    path = LOCAL_COPIES / LOCAL_COPY_OF.get(source, "-")
    return path.read_text(encoding="utf-8") if path.is_file() else None


# The quotes of public pages as checked against a copy of their page: the digest of each one's normalized text, so that
# a clone, which has no copy, still tells a quote edited since it was checked.
QUOTE_DIGESTS = REPO / "tests" / "quote_digests.toml"


def digest(text: str) -> str:
    return hashlib.sha256(normalized(text).encode()).hexdigest()


def test_clause_ids_are_stable_slugs_within_their_area():
    for clause in CLAUSES.values():
        assert re.fullmatch(r"[a-z]+\.[a-z0-9-]+", clause.id), clause.id
        assert clause.id.split(".")[0] == clause.area, f"{clause.id} is filed under area {clause.area}"


def test_every_area_has_clauses():
    used = {c.area for c in CLAUSES.values()}
    assert set(load_areas()) == used, f"areas without clauses: {set(load_areas()) - used}"


@pytest.mark.parametrize("clause", CLAUSES.values(), ids=lambda c: c.id)
def test_clause_source_is_something_a_user_can_open(clause):
    """An https address, or a docstring of a named torch release (help() shows it): nothing outside the project."""
    assert re.fullmatch(r"https://\S+|docstring:torch==\d+\.\d+\.\d+:[A-Za-z_][\w.]*", clause.source), clause.source
    if clause.source.startswith("docstring:"):
        assert clause.source_label.startswith("torch ") and not clause.source_url
    else:
        assert clause.source_url == clause.source == clause.source_label


@pytest.mark.parametrize("clause", [c for c in CLAUSES.values() if c.text_kind == "quote"], ids=lambda c: c.id)
def test_quoted_clause_quotes_its_source_verbatim(clause):
    """In the source's text where it is at hand (a docstring always; a page where a copy lies beside the checkout),
    and everywhere the very text that was checked against the page (its digest in tests/quote_digests.toml)."""
    text = source_text(clause.source)
    if text is not None:
        assert normalized(clause.text) in normalized(text), f"{clause.id}: the quoted text is not in {clause.source}"
    if not clause.source.startswith("docstring:"):
        recorded = tomllib.loads(QUOTE_DIGESTS.read_text()).get(clause.id)
        assert recorded == digest(clause.text), (
            f"{clause.id}: its quote is not the text checked against {clause.source}" + (
                f"; checked now: record {clause.id!r} = {digest(clause.text)!r} in {QUOTE_DIGESTS.name}" if text is not None
                else " (check it against the page, then record its digest where a copy of the page is at hand)"))


def test_every_recorded_quote_digest_is_a_clauses():
    recorded = tomllib.loads(QUOTE_DIGESTS.read_text())
    quoted = {c.id for c in CLAUSES.values() if c.text_kind == "quote" and not c.source.startswith("docstring:")}
    assert set(recorded) == quoted, f"digests of no quoted clause: {set(recorded) - quoted}"


@pytest.mark.parametrize("clause", [c for c in CLAUSES.values() if c.source.startswith("docstring:")],
                         ids=lambda c: c.id)
def test_a_docstring_source_names_an_object_of_the_installed_torch(clause):
    assert source_text(clause.source).strip(), f"{clause.id}: {clause.source} has no docstring"


def test_nothing_the_project_ships_points_outside_it():
    """No file of the project names the workspace folder beside a checkout, or a file in it: a clone has neither
    (this test, which holds the one mapping to the local copies, aside)."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip(f"the project's files are what git lists, and this is no git checkout: {listed.stderr.strip()}")
    outside = re.compile(r"\.\./shared|spec-sources/|\b00\d_[0-9a-f]{16}\.txt")
    offenders = [f"{name}:{n}" for name in listed.stdout.splitlines()
                 if (REPO / name).is_file() and REPO / name != Path(__file__).resolve()
                 for n, line in enumerate(_lines(REPO / name), 1) if outside.search(line)]
    assert not offenders, f"these lines point outside the project: {offenders}"


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:  # a binary file (an image) names nothing
        return []


@pytest.mark.parametrize(
    "entry, problem",
    [
        ('level = "OUGHT"', "unknown level"),
        ('variants = ["sideways"]', "unknown variant"),
        ('area = "nowhere"', "unknown area"),
        ("dimensions = [1]", r"clauses.toml: \[\[clause\]\] #1 \(api.x\): field 'dimensions.0': Input should be a valid string"),
        ('featurse = ["kwargs"]', r"clauses.toml: \[\[clause\]\] #1 \(api.x\): unknown field 'featurse'"),
        ('since = "2.x"', "is not a release"),
        ('relaxes = [{ observable = "mood", when = "reentrant" }]', "relaxes unknown observable"),
        ('relaxes = [{ observable = "gradients", when = "on tuesdays" }]', "relaxes under unknown condition"),
        ('source = "spec-sources/003.txt"', "is neither an https address nor docstring"),
        ('source = "docstring:torch.utils.checkpoint.checkpoint"', "is neither an https address nor docstring"),
    ],
)
def test_malformed_clause_is_rejected(tmp_path, entry, problem):
    fields = {"id": '"api.x"', "area": '"api"', "title": '"t"', "level": '"MUST"',
              "variants": '["reentrant"]', "source": '"https://example.org/x"', "text": '"t"', "dimensions": "[]"}
    key = entry.split(" =")[0]
    fields[key] = entry.split("= ", 1)[1]
    body = '[[area]]\nid = "api"\ntitle = "API"\n[[clause]]\n' + "\n".join(f"{k} = {v}" for k, v in fields.items())
    path = tmp_path / "clauses.toml"
    path.write_text(body)
    with pytest.raises(DataFileError, match=problem):
        load_clauses(path)


def test_duplicate_clause_id_is_rejected(tmp_path):
    clause = '[[clause]]\nid = "api.x"\narea = "api"\ntitle = "t"\nlevel = "MUST"\nvariants = ["reentrant"]\nsource = "https://example.org/s"\ntext = "t"\ndimensions = []\n'
    path = tmp_path / "clauses.toml"
    path.write_text('[[area]]\nid = "api"\ntitle = "API"\n' + clause + clause)
    with pytest.raises(DataFileError, match="duplicate"):
        load_clauses(path)


def test_a_clause_without_dimensions_is_rejected(tmp_path):
    clause = '[[clause]]\nid = "api.x"\narea = "api"\ntitle = "t"\nlevel = "MUST"\nvariants = ["reentrant"]\nsource = "https://example.org/s"\ntext = "t"\n'
    path = tmp_path / "clauses.toml"
    path.write_text('[[area]]\nid = "api"\ntitle = "API"\n' + clause)
    with pytest.raises(DataFileError, match=r"\[\[clause\]\] #1 \(api.x\): field 'dimensions' is missing"):
        load_clauses(path)


def test_a_table_the_clause_file_does_not_hold_is_rejected(tmp_path):
    path = tmp_path / "clauses.toml"
    path.write_text('[[area]]\nid = "api"\ntitle = "API"\n[[clauses]]\nid = "api.x"\n')
    with pytest.raises(DataFileError, match=r"clauses.toml: unknown table\(s\) \[\[clauses\]\]"):
        load_clauses(path)


def test_observed_clauses_are_kept_apart_from_the_documented_contract():
    observed = [c for c in CLAUSES.values() if c.level == "OBSERVED"]
    assert observed and not any(c.is_documented for c in observed)
    assert all(c.is_documented for c in CLAUSES.values() if c.level != "OBSERVED")
    assert CLAUSES["debug.rejects-context-fn"].level == "OBSERVED", "the docs never state that limitation"


def test_no_rejection_test_accepts_an_arbitrary_exception():
    """A rejection names its exception type or family: never bare Exception, never a default."""
    import inspect

    from conformance.testing import assertions

    assert inspect.signature(assertions.assert_raises).parameters["expected"].default is inspect.Parameter.empty
    suite = Path(__file__).resolve().parents[2] / "conformance" / "suite"
    loose = re.compile(r"(assert_raises|assert_rejected|pytest\.raises)\(\s*(Exception|BaseException)\b")
    offenders = [f"{path.name}:{n}" for path in suite.glob("*.py")
                 for n, line in enumerate(path.read_text().splitlines(), 1) if loose.search(line)]
    assert not offenders, f"rejection tests that accept any exception: {offenders}"


class _Collector:
    def __init__(self):
        self.tested = set()

    def pytest_collection_modifyitems(self, items):
        self.tested |= {cid for item in items for cid in clause_ids_of(item)}


def test_every_must_clause_has_a_test():
    collector = _Collector()
    exit_code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "--impl=torch.utils.checkpoint", "--device=all",
                             "conformance/suite"], plugins=[collector])
    assert exit_code == 0, "the conformance suite does not collect cleanly"
    untested = [c.id for c in CLAUSES.values() if c.is_must and c.id not in collector.tested]
    assert not untested, f"MUST clauses with no test: {untested}"


def test_the_oracles_relaxations_name_what_it_observes_and_can_decide():
    """The registry's vocabulary of observables and conditions is the oracle's: what compare.py compares, what
    allowances.py can decide; and a clause that relaxes something is one a relaxation can come from (an
    OBSERVED clause, or a documented one whose sentence names the difference)."""
    from conformance.oracle.allowances import CONDITIONS
    from conformance.oracle.compare import OBSERVABLES
    from conformance.data.vocabulary import ORACLE_CONDITIONS, ORACLE_OBSERVABLES

    assert tuple(ORACLE_OBSERVABLES) == OBSERVABLES
    assert set(ORACLE_CONDITIONS) == set(CONDITIONS)
    relaxing = [c for c in CLAUSES.values() if c.relaxes]
    assert relaxing, "no clause declares a difference the oracle allows"
    assert {w for c in relaxing for _, w in c.relaxes} == set(CONDITIONS), "a condition no clause uses"
