"""Every clause declares the input dimensions its text quantifies over, and its tests span each one.

Spanning is checked mechanically, not read from a declaration: a dimension (conformance/data/dimensions.py)
is spanned when the collected tests of the clause take every value of its pytest parameter, or when a
hypothesis strategy of one of its tests can draw an example with each value (hypothesis.find).
"""

from collections import defaultdict

import pytest
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample

from conformance.data.dimensions import DIMENSIONS, unknown
from conformance.data.facts import clause_ids_of
from conformance.data.registry import load_clauses

CLAUSES = load_clauses()
FIND_SETTINGS = settings(database=None, max_examples=2000, derandomize=True, phases=[Phase.generate],
                         suppress_health_check=list(HealthCheck))


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


class _Spans:
    """A pytest plugin object: per clause, the values each parameter takes and the hypothesis strategies."""

    def __init__(self):
        self.values = defaultdict(lambda: defaultdict(set))  # clause -> param -> values
        self.strategies = defaultdict(dict)  # clause -> test name -> the strategies @given draws from

    def pytest_collection_modifyitems(self, items):
        for item in items:
            params = getattr(getattr(item, "callspec", None), "params", {})
            handle = getattr(item.obj, "hypothesis", None)
            for cid in clause_ids_of(item):
                for name, value in params.items():
                    if _hashable(value):  # an unhashable value (a dict of keywords) is no vocabulary value
                        self.values[cid][name].add(value)
                if handle is not None:
                    self.strategies[cid][item.originalname] = list(handle._given_kwargs.values())


@pytest.fixture(scope="module")
def spans():
    collector = _Spans()
    args = ["--collect-only", "-q", "-p", "no:cacheprovider", "--impl=torch.utils.checkpoint", "--device=all", "conformance/suite"]
    assert pytest.main(args, plugins=[collector]) == 0, "the conformance suite does not collect cleanly"
    return collector


def drawable(strategy, param, value) -> bool:
    try:
        find(strategy, lambda example: getattr(example, param, object()) == value, settings=FIND_SETTINGS)
    except NoSuchExample:
        return False
    return True


def missing_values(spans, clause_id, dimension):
    """The values of the dimension that no test of the clause takes, by parameter or by strategy."""
    missing = [v for v in dimension.values if v not in spans.values[clause_id].get(dimension.param, set())]
    if not missing or not dimension.drawable:
        return missing
    strategies = [s for strategy_list in spans.strategies[clause_id].values() for s in strategy_list]
    return [v for v in missing if not any(drawable(s, dimension.param, v) for s in strategies)]


def test_every_declared_dimension_is_in_the_vocabulary():
    bad = {c.id: unknown(c.dimensions) for c in CLAUSES.values() if unknown(c.dimensions)}
    assert not bad, f"dimensions not in conformance/data/dimensions.py (add them there, with the parameter that spans them): {bad}"


@pytest.mark.parametrize("clause", [c for c in CLAUSES.values() if c.dimensions], ids=lambda c: c.id)
def test_every_declared_dimension_is_spanned_by_the_clauses_tests(clause, spans):
    gaps = {}
    for name in clause.dimensions:
        if name in DIMENSIONS:
            missing = missing_values(spans, clause.id, DIMENSIONS[name])
            if missing:
                gaps[name] = missing
    assert not gaps, (
        f"{clause.id}: no test spans these values of its declared dimensions {gaps} "
        f"(parametrize a test of the clause over the parameter named in conformance/data/dimensions.py, "
        f"or draw it in a hypothesis strategy)"
    )


def test_a_strategy_spans_only_what_it_can_draw():
    """The check itself can fail: a strategy that never draws float64 does not span dtype."""
    from hypothesis import strategies as st

    class Example:
        def __init__(self, dtype):
            self.dtype = dtype

    only_float32 = st.builds(Example, st.just("float32"))
    assert drawable(only_float32, "dtype", "float32")
    assert not drawable(only_float32, "dtype", "float64")
