"""snippets/syncbn_and_sharding/fsdp_practice.py, run exactly as docs/syncbn-and-sharding.md says."""
from __future__ import annotations

import copy
import re
import pytest
import torch
from torch import nn
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, _ops, _passes, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/fsdp_practice.py")]


PROGRAM = FOLDER / "fsdp_practice.py"
program = import_program(PROGRAM)
N_BLOCKS = len(program.Net().blocks)
N_UNITS = N_BLOCKS + 1  # and the root, which holds the head
GRAD_TOL = dict(rtol=2e-2, atol=2e-3)  # bf16 compute: the test's reference runs with other thread counts


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(PROGRAM, tmp_path_factory, pytestconfig)


@pytest.fixture(scope="module")
def reference(job) -> list[dict]:
    """The program's training redone in one process: per step, every rank's micro-batches
    in bf16 on a bf16 copy of the fp32 weights, gradients accumulated in fp32 and averaged
    over the ranks, clipped by the norm of the whole gradient, then Adam on the fp32 weights.
    Returns per step the full gradient before clipping and its norm."""
    torch.manual_seed(0)
    model = program.Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=program.LR)
    steps = []
    for step in range(program.STEPS):
        total = [torch.zeros_like(p) for p in model.parameters()]
        last = [torch.zeros_like(p) for p in model.parameters()]
        for rank in range(job.world_size):
            low = copy.deepcopy(model).to(torch.bfloat16)
            for micro in range(program.ACCUMULATE):
                x, y = program.micro_batch(rank, step, micro)
                loss = nn.functional.mse_loss(low(x.to(torch.bfloat16)).float(), y) / program.ACCUMULATE
                grads = torch.autograd.grad(loss, list(low.parameters()))
                total = [t + g.float() for t, g in zip(total, grads)]
                if micro == program.ACCUMULATE - 1:
                    last = [t + g.float() for t, g in zip(last, grads)]
        grads = [t / job.world_size for t in total]
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        steps.append({"grads": [g.clone() for g in grads], "norm": norm.item(),
                      "last_only": [t / job.world_size for t in last]})
        coef = min(1.0, program.MAX_NORM / (norm.item() + 1e-6))
        for p, g in zip(model.parameters(), grads):
            p.grad = g * coef
        optimizer.step()
    return steps


def _full(shards: list[torch.Tensor]) -> torch.Tensor:
    return torch.cat(shards)  # dim-0 shards in rank order


def _clip_calls(job: JobResult) -> list[list[dict]]:
    calls = [job.records[r]["extra"]["clips"] for r in range(job.world_size)]
    assert all(len(c) == program.STEPS for c in calls)
    return calls


class TestMixedPrecision:
    def test_weights_are_gathered_in_bf16_and_gradients_reduced_in_fp32(self, job):
        for rank in range(job.world_size):
            events = job.records[rank]["extra"]["events"]
            assert {e["dtype"] for e in _ops(events, "all_gather")} == {"bfloat16"}
            assert {e["dtype"] for e in _ops(events, "reduce_scatter")} == {"float32"}

    def test_the_shards_the_optimizer_updates_stay_fp32(self, job):
        for rank in range(job.world_size):
            for params in job.records[rank]["extra"]["sharded_steps"]:
                assert {p["element_size"] for p in params} == {4}


class TestGradientAccumulation:
    def test_only_the_last_micro_batch_reduce_scatters(self, job):
        for rank in range(job.world_size):
            passes = _passes(job.records[rank]["extra"]["events"])
            assert len(passes) == program.STEPS * program.ACCUMULATE
            for i, one in enumerate(passes):
                last = i % program.ACCUMULATE == program.ACCUMULATE - 1
                assert len(_ops(one["backward"], "reduce_scatter")) == (N_UNITS if last else 0), f"rank {rank}, pass {i}"

    def test_the_gradient_averages_every_micro_batch_of_every_rank(self, job, reference):
        calls = _clip_calls(job)
        for step, expected in enumerate(reference):
            for i, grad in enumerate(expected["grads"]):
                got = _full([calls[r][step]["before"][i] for r in range(job.world_size)])
                torch.testing.assert_close(got, grad, **GRAD_TOL)
        # not the last micro-batch's alone: the earlier ones were kept and added
        got = _full([calls[r][0]["before"][0] for r in range(job.world_size)])
        assert not torch.allclose(got, reference[0]["last_only"][0], **GRAD_TOL)


class TestClipping:
    def test_every_rank_gets_the_norm_of_the_whole_gradient(self, job, reference):
        calls = _clip_calls(job)
        printed = [float(m[1]) for m in re.finditer(r"^step \d+: gradient norm ([\d.]+), clipped to ", job.stdout(0), re.M)]
        for step, expected in enumerate(reference):
            norms = [calls[r][step]["norm"].item() for r in range(job.world_size)]
            for r in range(job.world_size):  # a DTensor replicated on every rank
                assert (calls[r][step]["norm_class"], calls[r][step]["norm_placements"]) == ("DTensor", ["R"])  # str(Replicate())
            assert len(set(norms)) == 1, norms  # the same on every rank
            whole = torch.linalg.vector_norm(torch.stack([
                torch.linalg.vector_norm(_full([calls[r][step]["before"][i] for r in range(job.world_size)]))
                for i in range(len(calls[0][step]["before"]))]))
            assert norms[0] == pytest.approx(whole.item(), rel=1e-4)  # of all shards together, not one rank's
            assert norms[0] == pytest.approx(expected["norm"], rel=2e-2)
            assert printed[step] == pytest.approx(norms[0], abs=1e-4)
            local = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in calls[0][step]["before"]]))
            assert local.item() != pytest.approx(norms[0], rel=1e-3)

    def test_every_shard_is_scaled_alike_down_to_the_maximum_norm(self, job):
        calls = _clip_calls(job)
        for step in range(program.STEPS):
            norm = calls[0][step]["norm"].item()
            assert norm > program.MAX_NORM  # so clipping had something to do
            coef = program.MAX_NORM / (norm + 1e-6)
            for r in range(job.world_size):
                for before, after in zip(calls[r][step]["before"], calls[r][step]["after"]):
                    torch.testing.assert_close(after, before * coef)


class TestActivationCheckpointingAndPrefetch:
    def test_backward_recomputes_each_checkpointed_block(self, job):
        for rank in range(job.world_size):
            for one in _passes(job.records[rank]["extra"]["events"]):
                assert len(_ops(one["forward"], "linear")) == N_BLOCKS + 1  # the blocks and the head
                assert len(_ops(one["backward"], "linear")) == N_BLOCKS  # the blocks' forwards again
                # with the weights the backward pass gathers anyway: one all-gather per block, none extra
                assert len(_ops(one["backward"], "all_gather")) == N_BLOCKS

    def test_each_block_gathers_the_next_one_before_that_one_starts(self, job):
        for rank in range(job.world_size):
            for one in _passes(job.records[rank]["extra"]["events"]):
                gathers, counts = 0, []
                for event in one["forward"]:
                    if event["op"] == "forward":
                        counts.append(0)
                    elif event["op"] == "all_gather":
                        counts[-1] += 1
                # the root gathers itself; block 0 itself and block 1; block 1 gathers block 2; block 2 nothing
                assert counts == [1, 2] + [1] * (N_BLOCKS - 2) + [0], counts


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^step 1: gradient norm [\d.]+, clipped to 1\.0$",))
