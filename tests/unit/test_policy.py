"""The runner's give-up policy (conformance/run/policy.py) scales with the run, not with the suite's size."""

from conformance.run.policy import Limits


def test_a_file_is_abandoned_after_its_streak_until_the_run_has_given_up_on_enough_files():
    limits = Limits(abandon_after=3)
    assert not limits.abandons(["crash", "timeout"], abandoned_files=0)
    assert limits.abandons(["crash", "timeout", "crash"], abandoned_files=0)
    assert not limits.abandons(["crash"], abandoned_files=2)
    # the implementation has shown that it dies: a later file gets one death
    assert limits.abandons(["crash"], abandoned_files=3)
    assert not limits.abandons([], abandoned_files=3)
    assert not Limits(abandon_after=0).abandons(["crash"] * 9, abandoned_files=9)  # 0: never give up


def test_a_run_is_abandoned_as_a_whole_after_twice_as_many_files():
    assert [Limits(abandon_after=3).abandons_run(n) for n in (0, 5, 6)] == [False, False, True]
    assert not Limits(abandon_after=0).abandons_run(99)
