"""What is expected of a test (conformance/data/expectations.py, ``judge``): a declared deviation first, then a capability
not claimed, then, for a failure, its row's breakage; and the known upstream bug a failure matches."""

import pytest

from conformance.data.capabilities import Capabilities
from conformance.data.causes import Cause, Pattern
from conformance.data.expectations import Breakage, Deviation, Expectations, KnownUpstream, judge
from conformance.data.facts import Facts

NODEID = "conformance/suite/test_api.py::test_x[reentrant]"
FAILED = (Cause("difference", "gradients", "x differs"),)
DEVIATION = Deviation(impl=("mine",), clauses=("api.same-gradients",), reason="it does not", failure=(Pattern(observable="gradients"),))
BREAKAGE = Breakage(impl=("mine",), reason="the whole row", failure=(Pattern(observable="gradients"),))
UPSTREAM = KnownUpstream(test=("test_x",), bug="o/r#1", url="https://x", summary="torch's own")


def judged(status, *, expectations, capabilities=Capabilities(), impl="mine"):
    facts = Facts(("api.same-gradients",), "reentrant", "cpu", causes=FAILED if status == "fail" else ())
    return judge(facts, nodeid=NODEID, status=status, impl=impl, capabilities=capabilities, torch_release="2.13",
                 expectations=expectations)


def test_a_declared_deviation_comes_first():
    unclaimed = Capabilities(variants=frozenset({"non_reentrant"}))
    assert judged("fail", expectations=Expectations((DEVIATION,)), capabilities=unclaimed).expected.kind == "deviation"
    assert judged("fail", expectations=Expectations(), capabilities=unclaimed).expected.kind == "unsupported"


@pytest.mark.parametrize("status, expected", [("fail", "deviation"), ("pass", None)])
def test_a_rows_breakage_expects_only_failures(status, expected):
    result = judged(status, expectations=Expectations(breakages=(BREAKAGE,)))
    assert (result.expected and result.expected.kind) == expected


def test_a_declaration_of_another_row_expects_nothing():
    assert judged("fail", expectations=Expectations((DEVIATION,), (BREAKAGE,)), impl="theirs").expected is None


def test_a_known_upstream_bug_names_a_failure_and_leaves_it_a_failure():
    failed = judged("fail", expectations=Expectations(known_upstream=(UPSTREAM,)))
    assert failed.upstream.bug == "o/r#1" and failed.expected is None
    assert judged("pass", expectations=Expectations(known_upstream=(UPSTREAM,))).upstream is None
