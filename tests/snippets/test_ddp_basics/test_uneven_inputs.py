"""snippets/ddp_basics/uneven_inputs.py, run exactly as docs/ddp-basics.md says.

The page's claims: with ``Join`` a job whose ranks have different numbers of batches
finishes; the rank that runs out first stops stepping and joins the others' all-reduces
with zero gradients, still divided by the full world size; when every rank has joined,
the replicas are made equal again (from the last rank to join); ``Join`` costs two
one-element all-reduces per iteration of this model.
"""
from __future__ import annotations

import pytest
import torch
from torch import nn

from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, assert_same, extra, grads_of, load, run

PROGRAM = FOLDER / "uneven_inputs.py"
uneven = import_program(PROGRAM)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("ddp_basics/uneven_inputs.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return run(PROGRAM, tmp_path_factory, pytestconfig)


def _batches(rank: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    x, y = uneven.make_shard(rank).tensors
    return [(x[i:i + uneven.BATCH_SIZE], y[i:i + uneven.BATCH_SIZE]) for i in range(0, len(x), uneven.BATCH_SIZE)]


def _model(state):
    return load(nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)), state)


JOIN_ALL_REDUCES_PER_ITERATION = 2  # the page: "two small all-reduces to every iteration" of this model (no buffers)


def test_join_adds_two_one_element_all_reduces_to_every_iteration(job):
    most = max(len(_batches(r)) for r in range(job.world_size))
    for rank in range(job.world_size):
        trace = extra(job, rank)["join_trace"]
        assert all(numel == 1 for op, numel in trace if op == "all_reduce"), f"rank {rank}: {trace}"
        forwards = [i for i, (op, _) in enumerate(trace) if op == "forward"]
        assert len(forwards) == len(_batches(rank))
        for start, end in zip(forwards, forwards[1:]):  # the iterations this rank trained itself
            assert [op for op, _ in trace[start:end]].count("all_reduce") == JOIN_ALL_REDUCES_PER_ITERATION, f"rank {rank}: {trace}"
        # as many for every iteration the longest rank ran, trained or shadowed, and two
        # more at the end: one finds that every rank has joined, one agrees on the last to join
        assert [op for op, _ in trace].count("all_reduce") == JOIN_ALL_REDUCES_PER_ITERATION * most + 2, f"rank {rank}: {trace}"


def test_the_ranks_have_different_numbers_of_batches_and_each_trains_on_all_of_its_own(job):
    counts = [len(_batches(r)) for r in range(job.world_size)]
    assert len(set(counts)) == job.world_size  # uneven: otherwise nothing here needs Join
    for r in range(job.world_size):
        assert len(extra(job, r)["steps"]) == counts[r], f"rank {r}"
    assert f"batches per rank: {counts}" in job.stdout(0)
    assert f"rank 0: done with its {counts[0]} batches" in job.stdout(0)


def test_while_every_rank_trains_the_gradients_are_averaged(job):
    shortest = min(len(_batches(r)) for r in range(job.world_size))
    for step in range(shortest):
        model = _model(extra(job, 0)["steps"][step]["weights"])
        x = torch.cat([_batches(r)[step][0] for r in range(job.world_size)])
        y = torch.cat([_batches(r)[step][1] for r in range(job.world_size)])
        expected = grads_of(model, nn.MSELoss()(model(x), y))
        for r in range(job.world_size):
            assert_same(extra(job, r)["steps"][step]["grads"], expected)


def test_after_a_rank_joins_it_adds_zeros_and_the_sum_is_still_divided_by_the_world_size(job):
    last = job.world_size - 1
    batches = _batches(last)
    shortest = min(len(_batches(r)) for r in range(job.world_size))
    for step in range(shortest, len(batches)):
        rec = extra(job, last)["steps"][step]
        model = _model(rec["weights"])
        x, y = batches[step]
        local = grads_of(model, nn.MSELoss()(model(x), y))
        assert_same(rec["grads"], {n: g / job.world_size for n, g in local.items()})


def test_when_all_have_joined_the_replicas_are_equal_again(job):
    last = extra(job, job.world_size - 1)
    for r in range(job.world_size):
        after = extra(job, r)["after_join"]
        assert after is not None
        for name, value in job.records[job.world_size - 1]["final_state"].items():
            assert torch.equal(after[name], value), f"rank {r}: {name}"
    # rank 0 stopped stepping early: without the final broadcast it would differ
    assert any(not torch.equal(job.records[0]["final_state"][n], v) for n, v in last["after_join"].items())


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^batches per rank: \[3, 4\]$",))
