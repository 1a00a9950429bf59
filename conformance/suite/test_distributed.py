"""Checkpointing inside DistributedDataParallel and FSDP, on real process groups (clauses distributed.*).

Two ranks (conformance/fixtures/distributed.py: gloo on 127.0.0.1 on CPU, NCCL with one GPU per rank on CUDA) train
the same model under DDP or FSDP for a few steps, with the implementation's ``checkpoint`` called in the
model's forward and without it (conformance/fixtures/data_parallel.py); every step's gradients must be equal. The
ranks are started once per module and serve one case at a time; a rank that hangs or dies fails its
test (TIMEOUT, or the crash with the ranks' output), and the next test starts fresh ranks.
"""

import pytest

from conformance.testing.assertions import assert_same_gradients
from conformance.fixtures import data_parallel
from conformance.fixtures.distributed import RankError, Ranks, interrupted_by_sigterm, unavailable_reason

pytestmark = pytest.mark.slow  # runs on spawned ranks: seconds each, more on a busy machine (the runner's --slow-timeout)

@pytest.fixture(scope="module")
def ranks(impl):
    with interrupted_by_sigterm():  # a SIGTERM still closes the pools: no rank or folder of theirs is left
        pools = Ranks(impl.module.__name__)
        try:
            yield pools
        finally:
            pools.close()


def run_on_ranks(ranks, device, case, **params):
    reason = unavailable_reason(device)
    if reason:
        pytest.skip(reason)
    return ranks.run(device, case, **params)


def rank_errors(results) -> list[RankError]:
    return [r for r in results if isinstance(r, RankError)]


def assert_same_as_uncheckpointed(results, what):
    """No rank raised, and on every rank every step's gradients equal the un-checkpointed run's."""
    errors = rank_errors(results)
    assert not errors, f"{what} raised on the ranks:\n" + "\n".join(f"{e}\n{e.traceback}" for e in errors)
    for rank, runs in enumerate(results):
        for step, (actual, expected) in enumerate(zip(runs["checkpointed"], runs["reference"])):
            names = [f"rank {rank}, step {step}: gradient of {name}" for name in expected]
            assert_same_gradients([actual.get(n) for n in expected], list(expected.values()), names)


# Layer checkpointed once or twice, unused parameters inside or outside the checkpointed layer, and the
# DDP options each case needs: name -> (keywords of data_parallel.ddp_gradients).
ONCE = {"times": 1}
TWICE = {"times": 2}
UNUSED_INSIDE = {"unused": "inside", "find_unused_parameters": True}
UNUSED_OUTSIDE = {"unused": "outside", "find_unused_parameters": True}
# The DDP cases by name (the `ddp_case` parameter spans the "DDP case" dimension, conformance/data/dimensions.py).
DDP_CASES = {"once": ONCE, "twice": TWICE, "unused-inside": UNUSED_INSIDE, "unused-outside": UNUSED_OUTSIDE}


@pytest.mark.clause("distributed.ddp-non-reentrant")
@pytest.mark.parametrize("ddp_case", list(DDP_CASES))
def test_non_reentrant_ddp_gives_the_uncheckpointed_ddp_gradients(ckpt, ranks, device, ddp_case):
    case = DDP_CASES[ddp_case]
    results = run_on_ranks(ranks, device, data_parallel.ddp_gradients, variant=ckpt.variant, **case)
    assert_same_as_uncheckpointed(results, f"DDP with a non-reentrant checkpoint ({case})")


@pytest.mark.clause("distributed.ddp-reentrant-once")
def test_reentrant_ddp_gives_the_uncheckpointed_ddp_gradients_with_each_layer_checkpointed_once(ckpt, ranks, device):
    results = run_on_ranks(ranks, device, data_parallel.ddp_gradients, variant=ckpt.variant, **ONCE)
    assert_same_as_uncheckpointed(results, "DDP with a reentrant checkpoint, each layer checkpointed once")


@pytest.mark.clause("distributed.ddp-reentrant-unsupported")
@pytest.mark.parametrize("ddp_case", ["twice", "unused-inside", "unused-outside", "once-find-unused-parameters"])
def test_reentrant_ddp_outside_its_documented_support_errs_or_gives_the_uncheckpointed_gradients(ckpt, ranks, device, ddp_case):
    case = DDP_CASES.get(ddp_case) or {**ONCE, "find_unused_parameters": True}
    results = run_on_ranks(ranks, device, data_parallel.ddp_gradients, variant=ckpt.variant, **case)
    if rank_errors(results):
        return  # documented as not supported: an error, whatever it says, is within the contract
    assert_same_as_uncheckpointed(results, f"DDP with a reentrant checkpoint ({case}) ran without error, and")


# static_graph=True supports unused parameters without find_unused_parameters; unused-outside is also
# checkpointed twice, to combine both documented supports in one case.
STATIC_GRAPH_CASES = {"once": ONCE, "twice": TWICE, "unused-inside": {"unused": "inside"},
                      "unused-outside": {**UNUSED_OUTSIDE, "times": 2}}


@pytest.mark.clause("distributed.ddp-static-graph")
@pytest.mark.parametrize("ddp_case", list(STATIC_GRAPH_CASES))
def test_static_graph_ddp_gives_the_uncheckpointed_ddp_gradients(ckpt, ranks, device, ddp_case):
    case = STATIC_GRAPH_CASES[ddp_case]
    results = run_on_ranks(ranks, device, data_parallel.ddp_gradients, variant=ckpt.variant, static_graph=True, **case)
    assert_same_as_uncheckpointed(results, f"DDP(static_graph=True) with a {ckpt.variant} checkpoint ({case})")


@pytest.mark.clause("distributed.rng-across-ranks")
def test_each_rank_replays_its_own_dropout_masks_under_ddp(ckpt, ranks, device):
    results = run_on_ranks(ranks, device, data_parallel.ddp_gradients, variant=ckpt.variant, dropout=0.5, **ONCE)
    assert_same_as_uncheckpointed(results, "DDP with dropout inside the checkpointed layer")


@pytest.mark.clause("distributed.fsdp-checkpoint-wrapper")
@pytest.mark.parametrize("api", sorted(data_parallel.FSDP_APIS))
def test_fsdp_with_checkpoint_wrapper_gives_the_uncheckpointed_fsdp_gradients(ckpt, ranks, device, api):
    results = run_on_ranks(ranks, device, data_parallel.fsdp_gradients, variant=ckpt.variant, api=api)
    unavailable = sorted({r["unavailable"] for r in results if isinstance(r, dict) and "unavailable" in r})
    if unavailable:  # the uncheckpointed baseline, which never calls the implementation, cannot run
        pytest.skip("; ".join(unavailable))
    assert_same_as_uncheckpointed(results, f"{api} with apply_activation_checkpointing(checkpoint_wrapper)")
