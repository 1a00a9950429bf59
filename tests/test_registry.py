"""The clause registry is well formed, faithful to its sources, and every MUST clause is tested."""

import importlib
import re
from pathlib import Path

import pytest

from conformance.facts import clause_ids_of
from conformance.registry import RegistryError, load_areas, load_clauses

SPEC_SOURCES = Path(__file__).resolve().parents[1].parent / "shared"
CLAUSES = load_clauses()


def normalized(text: str) -> str:
    """Compare prose, not markup: drop reST/markdown quoting and collapse whitespace."""
    text = re.sub(r":(attr|func|class|meth):", "", text)
    text = re.sub(r"-\n\s*", "-", text)  # a hyphenated word broken across lines
    text = text.replace("``", "").replace("`", "").replace("\\", "")
    return " ".join(text.split())


def source_text(source: str) -> str:
    if source.startswith("docstring:"):
        _, requirement, dotted = source.split(":", 2)
        module_name, _, attr = dotted.rpartition(".")
        return importlib.import_module(module_name).__dict__[attr].__doc__ or ""
    path = SPEC_SOURCES / source
    if not path.exists():
        pytest.skip(f"{path} is absent: the spec sources live in ../shared beside a checkout")
    return path.read_text(encoding="utf-8")


def test_clause_ids_are_stable_slugs_within_their_area():
    for clause in CLAUSES.values():
        assert re.fullmatch(r"[a-z]+\.[a-z0-9-]+", clause.id), clause.id
        assert clause.id.split(".")[0] == clause.area, f"{clause.id} is filed under area {clause.area}"


def test_every_area_has_clauses():
    used = {c.area for c in CLAUSES.values()}
    assert set(load_areas()) == used, f"areas without clauses: {set(load_areas()) - used}"


@pytest.mark.parametrize("clause", CLAUSES.values(), ids=lambda c: c.id)
def test_clause_source_exists_and_quotes_it_verbatim(clause):
    assert clause.source.startswith(("spec-sources/", "docstring:torch==")), clause.source
    text = source_text(clause.source)
    if clause.text_kind == "quote":
        assert normalized(clause.text) in normalized(text), f"{clause.id}: the quoted text is not in {clause.source}"


@pytest.mark.parametrize(
    "entry, problem",
    [
        ('level = "OUGHT"', "unknown level"),
        ('variants = ["sideways"]', "unknown variant"),
        ('area = "nowhere"', "unknown area"),
        ("dimensions = [1]", "dimensions must be a list of strings"),
        ('since = "2.x"', "is not a release"),
        ('relaxes = [{ observable = "mood", when = "reentrant" }]', "relaxes unknown observable"),
        ('relaxes = [{ observable = "gradients", when = "on tuesdays" }]', "relaxes under unknown condition"),
    ],
)
def test_malformed_clause_is_rejected(tmp_path, entry, problem):
    fields = {"id": '"api.x"', "area": '"api"', "title": '"t"', "level": '"MUST"',
              "variants": '["reentrant"]', "source": '"spec-sources/x"', "text": '"t"', "dimensions": "[]"}
    key = entry.split(" =")[0]
    fields[key] = entry.split("= ", 1)[1]
    body = '[[area]]\nid = "api"\ntitle = "API"\n[[clause]]\n' + "\n".join(f"{k} = {v}" for k, v in fields.items())
    path = tmp_path / "clauses.toml"
    path.write_text(body)
    with pytest.raises(RegistryError, match=problem):
        load_clauses.__wrapped__(path)


def test_duplicate_clause_id_is_rejected(tmp_path):
    clause = '[[clause]]\nid = "api.x"\narea = "api"\ntitle = "t"\nlevel = "MUST"\nvariants = ["reentrant"]\nsource = "s"\ntext = "t"\ndimensions = []\n'
    path = tmp_path / "clauses.toml"
    path.write_text('[[area]]\nid = "api"\ntitle = "API"\n' + clause + clause)
    with pytest.raises(RegistryError, match="duplicate"):
        load_clauses.__wrapped__(path)


def test_a_clause_without_dimensions_is_rejected(tmp_path):
    clause = '[[clause]]\nid = "api.x"\narea = "api"\ntitle = "t"\nlevel = "MUST"\nvariants = ["reentrant"]\nsource = "s"\ntext = "t"\n'
    path = tmp_path / "clauses.toml"
    path.write_text('[[area]]\nid = "api"\ntitle = "API"\n' + clause)
    with pytest.raises(RegistryError, match="dimensions"):
        load_clauses.__wrapped__(path)


def test_observed_clauses_are_kept_apart_from_the_documented_contract():
    observed = [c for c in CLAUSES.values() if c.level == "OBSERVED"]
    assert observed and not any(c.is_documented for c in observed)
    assert all(c.is_documented for c in CLAUSES.values() if c.level != "OBSERVED")
    assert CLAUSES["debug.rejects-context-fn"].level == "OBSERVED", "the docs never state that limitation"


def test_no_rejection_test_accepts_an_arbitrary_exception():
    """A rejection names its exception type or family: never bare Exception, never a default."""
    import inspect

    from conformance import assertions

    assert inspect.signature(assertions.assert_raises).parameters["expected"].default is inspect.Parameter.empty
    suite = Path(__file__).resolve().parents[1] / "conformance" / "suite"
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
    exit_code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "--impl=torch.utils.checkpoint", "conformance/suite"], plugins=[collector])
    assert exit_code == 0, "the conformance suite does not collect cleanly"
    untested = [c.id for c in CLAUSES.values() if c.is_must and c.id not in collector.tested]
    assert not untested, f"MUST clauses with no test: {untested}"


def test_the_oracles_relaxations_name_what_it_observes_and_can_decide():
    """The registry's vocabulary of observables and conditions is the oracle's: what observe.py compares, what
    allowances.py can decide; and a clause that relaxes something is one a relaxation can come from (an
    OBSERVED clause, or a documented one whose sentence names the difference)."""
    from conformance.oracle.allowances import CONDITIONS
    from conformance.oracle.observe import OBSERVABLES
    from conformance.vocabulary import ORACLE_CONDITIONS, ORACLE_OBSERVABLES

    assert tuple(ORACLE_OBSERVABLES) == OBSERVABLES
    assert set(ORACLE_CONDITIONS) == set(CONDITIONS)
    relaxing = [c for c in CLAUSES.values() if c.relaxes]
    assert relaxing, "no clause declares a difference the oracle allows"
    assert {w for c in relaxing for _, w in c.relaxes} == set(CONDITIONS), "a condition no clause uses"
