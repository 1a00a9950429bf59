"""A test's facts (conformance/data/facts.py): charged to the check that failed, held to that check's level, and carried
between processes unchanged."""

from conformance.data.capabilities import Capabilities
from conformance.data.causes import Cause
from conformance.data.expectations import Expectations, judge
from conformance.data.facts import Expected, Facts, UpstreamBug
from conformance.data.registry import load_clauses


def _judged(facts: Facts) -> Facts:
    return judge(facts, nodeid="t::test[reentrant]", status="fail", impl="mine", capabilities=Capabilities(),
                 torch_release="2.13", expectations=Expectations())


def test_the_judge_holds_a_test_to_the_strictest_level_of_the_clauses_it_is_charged_to():
    clauses = load_clauses()
    must = next(c.id for c in clauses.values() if c.level == "MUST")
    observed = next(c.id for c in clauses.values() if c.level == "OBSERVED")
    both = Facts((must, observed), "reentrant", "cpu")
    assert both.level is None, "plain data: the level is the judge's to derive from the registry"
    assert _judged(both).level == "MUST"
    charged = _judged(both).charged([observed])
    assert (charged.clauses, charged.level, charged.variant) == ((observed,), None, "reentrant"), "judged afresh"
    assert _judged(charged).level == "OBSERVED"
    assert both.charged([observed], "non_reentrant").variant == "non_reentrant"


def test_facts_come_back_from_their_json_as_they_went():
    facts = Facts(("api.forward-value",), "non_reentrant", "cpu", expected=Expected("deviation", "why"),
                  notes=("a graph break",), upstream=UpstreamBug("o/r#1", "https://x", "it breaks"), reproducer="r.py",
                  causes=(Cause("exception", "TypeError", "no", ("Exception",)), Cause("difference", "rng", "", step=2)))
    assert Facts.from_json(facts.to_json()) == facts
