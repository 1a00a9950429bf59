"""The re-run with fixed draws (conformance/testing/draws.py, conformance/plugin/rerun.py): it tells a failure of the RNG
from any other, wherever the suite's tests happen to draw random numbers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

from conformance.testing import draws
from conformance.data.results import read_results

REPO = Path(__file__).resolve().parents[2]
RANDOM_TESTS = ["conformance/suite/test_reqgrad.py::test_non_reentrant_frozen_inputs_with_parameters_and_random_ops",
                "conformance/suite/test_retain.py::test_repeated_backward_replays_the_forward_random_draws"]


def test_fixed_draws_repeat_each_draw_and_leave_the_stream_alone():
    x = torch.ones(64)
    before = torch.get_rng_state()
    with draws.fixed() as fixed:
        first, again = F.dropout(x, 0.5), F.dropout(x, 0.5)
        one, other = torch.Generator().manual_seed(7), torch.Generator().manual_seed(8)
        assert torch.equal(torch.rand(3, generator=one), torch.rand(3, generator=other))  # a caller's generator too
    assert torch.equal(first, again) and not torch.equal(first, x)
    assert torch.equal(torch.get_rng_state(), before) and fixed.replaced == 4
    assert not draws.active()


def test_fixed_draws_tell_apart_what_the_op_reads():
    """bernoulli of two probability tensors draws from two seeds (a bug that swaps them still shows); of equal ones,
    from one. (CPU dropout fills an empty mask in place: its draws depend on the shape only.)"""
    p, q = torch.full((64,), 0.5), torch.full((64,), 0.5).index_fill_(0, torch.tensor([0]), 0.4)
    with draws.fixed():
        drawn = [torch.bernoulli(t) for t in (p, q, p.clone())]
    assert not torch.equal(drawn[0], drawn[1]) and torch.equal(drawn[0], drawn[2])


def _causes_and_clauses(tmp_path, impl):
    out = tmp_path / f"{impl}.json"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--impl={impl}",
                    "--variant=non_reentrant", f"--results={out}", *RANDOM_TESTS], cwd=REPO, capture_output=True, timeout=300)
    records = [r for r in read_results(out).records if r.status == "fail"]
    assert records, f"{impl} fails none of {RANDOM_TESTS}"
    return {(c.name for c in r.facts.causes).__next__() for r in records}, {c for r in records for c in r.facts.clauses}


def test_a_failure_that_vanishes_with_fixed_draws_is_the_rngs(tmp_path):
    """Issue 34: forcing preserve_rng_state off makes these tests' gradients differ; the re-run shows it is the
    draws, so each fails with the RNG as its cause (one group on the implementation page), charged to its own clause."""
    causes, clauses = _causes_and_clauses(tmp_path, "tests.mutants.rng.non_reentrant_forces_no_preserve")
    assert causes == {"rng"} and clauses == {"reqgrad.non-reentrant-gradients", "retain.repeated-backward"}


def test_a_failure_that_stays_with_fixed_draws_keeps_its_cause_and_clause(tmp_path):
    causes, clauses = _causes_and_clauses(tmp_path, "tests.mutants.reqgrad.non_reentrant_skips_graph_without_grad_inputs")
    assert "rng" not in causes and clauses == {"reqgrad.non-reentrant-gradients"}


def test_an_implementation_whose_draws_cannot_be_fixed_is_not_run_again(tmp_path, monkeypatch):
    """A compiled row falls back to eager under the re-run's dispatch mode ("fixed_draws": False): its
    failure keeps the cause it showed, which the re-run would have charged to the RNG."""
    (tmp_path / "unfixable_draws.py").write_text("from tests.mutants.rng.non_reentrant_forces_no_preserve import *  # noqa\n"
                                                 "__conformance__ = {'fixed_draws': False}\n")
    monkeypatch.setenv("PYTHONPATH", f"{REPO}:{tmp_path}")
    causes, _ = _causes_and_clauses(tmp_path, "unfixable_draws")
    assert "rng" not in causes and causes


def test_a_read_of_memory_nobody_wrote_fails_the_re_run_too():
    """torch's early stop leaves rrelu's saved noise buffer unfilled (pytorch/pytorch#193671): its gradients read
    torch.empty's memory. With the draws fixed, that memory may hold the very noise the plain run drew before, so the
    re-run passed by chance and the failure read as the RNG's (seen in `tox -e report`); filled, it fails."""
    from torch.utils.checkpoint import checkpoint

    from conformance.plugin.rerun import uninitialized_memory_filled

    def rrelu_last(t):
        return F.rrelu(t, training=True) * 2.0

    with draws.fixed(), uninitialized_memory_filled():
        assert torch.empty(4).isnan().all() and torch.empty(2, dtype=torch.int64).eq(torch.iinfo(torch.int64).max).all()
        x = torch.randn(8, 4, requires_grad=True)
        checkpoint(rrelu_last, x, use_reentrant=False).sum().backward()
        reference = x.detach().clone().requires_grad_()
        rrelu_last(reference).sum().backward()
        assert not torch.allclose(x.grad, reference.grad, equal_nan=False)
    assert not torch.are_deterministic_algorithms_enabled()  # as it was before the block
