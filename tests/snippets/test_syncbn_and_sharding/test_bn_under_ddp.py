"""snippets/syncbn_and_sharding/bn_under_ddp.py, run exactly as docs/syncbn-and-sharding.md says."""
from __future__ import annotations

import re
import pytest
import torch
from torch import nn
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, TOL, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/bn_under_ddp.py")]


PROGRAM = FOLDER / "bn_under_ddp.py"
program = import_program(PROGRAM)
_PRINTED = re.compile(r"^rank (\d+): running mean of channel 0: (-?[\d.]+) after training, (-?[\d.]+) in evaluation$", re.M)


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(PROGRAM, tmp_path_factory, pytestconfig)


def _running_mean(batches: list[torch.Tensor]) -> torch.Tensor:
    """The running mean one BatchNorm2d layer holds after training-mode forwards of these batches."""
    bn = nn.BatchNorm2d(program.CHANNELS)
    for x in batches:
        bn(x)
    return bn.running_mean


def _bn_calls(job: JobResult, rank: int) -> tuple[list[dict], list[dict]]:
    calls = job.records[rank]["extra"]["batchnorm"]
    return [c for c in calls if c["training"]], [c for c in calls if not c["training"]]


class TestBatchNormUnderDDP:
    def test_every_training_forward_starts_from_rank_0_s_statistics_and_adds_the_rank_s_own_batch(self, job):
        for rank in range(job.world_size):
            train, _ = _bn_calls(job, rank)
            assert len(train) == program.STEPS
            for step, call in enumerate(train):
                assert torch.equal(call["input"], program.make_batch(rank, step))
                rank0_before = [program.make_batch(0, s) for s in range(step)]
                expected = _running_mean(rank0_before + [program.make_batch(rank, step)])
                torch.testing.assert_close(call["running_mean"], expected, **TOL)

    def test_evaluation_uses_rank_0_s_statistics_on_every_rank(self, job):
        rank0 = _running_mean([program.make_batch(0, step) for step in range(program.STEPS)])
        global_batch = _running_mean([torch.cat([program.make_batch(r, step) for r in range(job.world_size)])
                                      for step in range(program.STEPS)])
        assert not torch.allclose(rank0, global_batch, atol=0.1)  # the ranks' data really differ
        for rank in range(job.world_size):
            _, evaluation = _bn_calls(job, rank)
            assert len(evaluation) == program.EVAL_BATCHES
            for call in evaluation:
                torch.testing.assert_close(call["running_mean"], rank0, **TOL)

    def test_buffers_are_copied_before_every_training_step_and_the_first_evaluation_batch_only(self, job):
        # DDP copies the buffers before a forward pass only if the forward pass before it
        # ran with gradients and outside no_sync(): not before a second evaluation batch
        for rank in range(job.world_size):
            calls = job.records[rank]["extra"]["batchnorm"]
            counts = [c["coalesced_broadcasts"] for c in calls]
            copied = [after - before for before, after in zip(counts, counts[1:])]  # from the second forward on
            assert [c["training"] for c in calls] == [True] * program.STEPS + [False] * program.EVAL_BATCHES
            assert copied == [1] * (program.STEPS - 1) + [1] + [0] * (program.EVAL_BATCHES - 1), f"rank {rank}: {copied}"
            # counted from the process's start: DDP's construction broadcast, then the copy before the first step
            assert counts[0] == 2, f"rank {rank}: {counts[0]} broadcasts before the first BatchNorm forward"

    def test_after_training_a_rank_holds_rank_0_s_previous_statistics_and_its_own_last_batch(self, job):
        before_last = [program.make_batch(0, step) for step in range(program.STEPS - 1)]
        printed = {int(m[1]): (float(m[2]), float(m[3])) for m in _PRINTED.finditer(
            "\n".join(job.stdout(r) for r in range(job.world_size)))}
        assert sorted(printed) == list(range(job.world_size))
        rank0 = _running_mean([program.make_batch(0, step) for step in range(program.STEPS)])
        for rank, (trained, evaluated) in printed.items():
            own = _running_mean(before_last + [program.make_batch(rank, program.STEPS - 1)])
            assert trained == pytest.approx(own[0].item(), abs=1e-3)
            assert evaluated == pytest.approx(rank0[0].item(), abs=1e-3)
        assert printed[1][0] != pytest.approx(printed[1][1], abs=0.05)  # rank 1's own statistics were replaced

    def test_rank_0_s_images_have_mean_0_and_rank_1_s_mean_3(self, job):
        for rank in range(job.world_size):
            for call in _bn_calls(job, rank)[0]:
                assert call["input"].mean().item() == pytest.approx(3 * rank, abs=0.3)

    def test_rank_1_moved_towards_3_and_evaluates_with_rank_0_s_value_near_0(self, job):
        printed = {int(m[1]): (float(m[2]), float(m[3])) for m in _PRINTED.finditer(
            "\n".join(job.stdout(r) for r in range(job.world_size)))}
        trained, evaluated = printed[1]
        assert abs(evaluated) < 0.1 and evaluated == printed[0][1]  # rank 0's value on both ranks
        assert trained > evaluated + 0.1  # rank 1's last batch pulled its copy towards 3


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^rank 1: running mean of channel 0: ",))
