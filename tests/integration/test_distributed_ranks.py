"""The rank pool of the distributed area (conformance/fixtures/distributed.py): per-rank answers, errors kept per
rank, a hung or dead rank failing its case within the bound, no process left behind; and an
implementation that does not claim "distributed" reading *unsupported*."""

import os
import time

import pytest

from conformance.data.results import read_results
from conformance.fixtures import distributed
from conformance.fixtures.distributed import RankError, RankFailure, RankPool, _in_step, unavailable_reason
from tests.broken.refuses_process_groups import REFUSAL


def answer_rank(ctx):
    import torch.distributed as dist

    return ctx.rank, dist.get_world_size(), dist.get_backend()


def fail_on_rank_one(ctx):
    if ctx.rank == 1:
        raise ValueError("rank one refuses")
    return "fine"


def hang_on_rank_one(ctx):
    while ctx.rank == 1:
        time.sleep(1)
    return "fine"


def die_on_rank_one(ctx):
    if ctx.rank == 1:
        os._exit(3)
    return "fine"


def assert_gone(pids):
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # joined, so not even a zombie is left


def test_cases_run_on_every_rank_errors_stay_per_rank_and_a_hung_rank_is_a_timeout():
    pool = RankPool("torch.utils.checkpoint", case_timeout_s=5)
    pids = pool.pids()
    try:
        assert pool.run(answer_rank) == [(0, 2, "gloo"), (1, 2, "gloo")]
        fine, error = pool.run(fail_on_rank_one)
        assert fine == "fine" and isinstance(error, RankError)
        assert (error.rank, error.type, error.message) == (1, "ValueError", "rank one refuses")
        started = time.monotonic()
        with pytest.raises(RankFailure, match=r"TIMEOUT: rank\(s\) \[1\] did not run hang_on_rank_one"):
            pool.run(hang_on_rank_one)
        assert time.monotonic() - started < 30
    finally:
        pool.close()
    assert_gone(pids)


def test_a_rank_that_dies_fails_the_case_with_its_exit_code():
    pool = RankPool("torch.utils.checkpoint")
    pids = pool.pids()
    try:
        with pytest.raises(RankFailure, match=r"(?s)rank\(s\) \[1\] died .*rank 1: exit code 3"):
            pool.run(die_on_rank_one)
    finally:
        pool.close()
    assert_gone(pids)


def test_an_implementation_that_does_not_claim_distributed_reads_unsupported_with_its_error(tmp_path):
    results = tmp_path / "results.json"
    pytest.main(["--impl=tests.broken.refuses_process_groups", f"--results={results}", "-q", "-p", "no:cacheprovider",
                 "--device=cpu", "--clause=distributed.ddp-reentrant-once", "conformance/suite/test_distributed.py"])
    records = read_results(results).records
    assert [r.verdict for r in records] == ["unsupported"]
    assert REFUSAL in records[0].message


def test_a_pool_is_kept_only_after_ranks_that_ended_alike():
    same = [RankError(r, "RuntimeError", "ready twice", "") for r in (0, 1)]
    assert _in_step(["a", "b"]) and _in_step(same)
    assert not _in_step(["a", same[1]])
    assert not _in_step([same[0], RankError(1, "RuntimeError", "timed out", "")])


def test_cuda_ranks_need_one_gpu_each_else_the_reason_says_so(monkeypatch):
    monkeypatch.setattr(distributed.dist, "is_nccl_available", lambda: True)
    monkeypatch.setattr(distributed.torch.cuda, "device_count", lambda: 1)
    assert unavailable_reason("cuda") == "NCCL runs one GPU per rank: 2 ranks need 2 GPUs, 1 here"
    monkeypatch.setattr(distributed.torch.cuda, "device_count", lambda: 2)
    assert unavailable_reason("cuda") is None
