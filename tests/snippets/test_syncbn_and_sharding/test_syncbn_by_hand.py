"""snippets/syncbn_and_sharding/syncbn_by_hand.py, run exactly as docs/syncbn-and-sharding.md says."""
from __future__ import annotations

import re
import pytest
import torch
from torch import nn
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, TOL, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/syncbn_by_hand.py")]


BY_HAND = FOLDER / "syncbn_by_hand.py"
by_hand = import_program(BY_HAND)


@pytest.fixture(scope="module")
def by_hand_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(BY_HAND, tmp_path_factory, pytestconfig)


def _by_hand_calls(job: JobResult) -> list[dict]:
    calls = [job.records[r]["extra"]["by_hand"] for r in range(job.world_size)]
    assert all(len(c) == 1 for c in calls), "one training-mode forward per rank"
    return [c[0] for c in calls]


class TestSyncBatchNormByHand:
    def test_the_ranks_hold_different_batches_of_different_sizes(self, by_hand_job):
        calls = _by_hand_calls(by_hand_job)
        assert len({c["input"].shape[0] for c in calls}) == by_hand_job.world_size
        for rank, call in enumerate(calls):
            assert torch.equal(call["input"], by_hand.make_local_batch(rank))

    def test_output_and_statistics_equal_batchnorm_over_the_global_batch(self, by_hand_job):
        calls = _by_hand_calls(by_hand_job)
        x = torch.cat([c["input"] for c in calls])
        reference = nn.BatchNorm2d(by_hand.CHANNELS)  # same initial weight, bias and statistics
        y = reference(x).detach()
        start = 0
        for call in calls:
            n = call["input"].shape[0]
            torch.testing.assert_close(call["output"], y[start:start + n], **TOL)
            torch.testing.assert_close(call["running_mean"], reference.running_mean, **TOL)
            torch.testing.assert_close(call["running_var"], reference.running_var, **TOL)
            assert call["num_batches_tracked"] == 1
            start += n

    def test_they_differ_from_each_ranks_local_statistics(self, by_hand_job):
        for call in _by_hand_calls(by_hand_job):
            local = nn.BatchNorm2d(by_hand.CHANNELS)
            y = local(call["input"]).detach()
            assert not torch.allclose(call["output"], y, **TOL)
            assert not torch.allclose(call["running_mean"], local.running_mean, **TOL)
            assert not torch.allclose(call["running_var"], local.running_var, **TOL)

    def test_counts_matter_the_mean_of_local_means_is_not_the_global_mean(self, by_hand_job):
        calls = _by_hand_calls(by_hand_job)
        x = torch.cat([c["input"] for c in calls])
        global_mean = x.mean(dim=(0, 2, 3))
        mean_of_means = torch.stack([c["input"].mean(dim=(0, 2, 3)) for c in calls]).mean(0)
        assert not torch.allclose(mean_of_means, global_mean, **TOL)
        values = x.numel() // by_hand.CHANNELS
        for rank, call in enumerate(calls):
            printed = re.search(r"local (\d+), global (\d+); mean of channel 0: local (-?[\d.]+), global (-?[\d.]+)",
                                by_hand_job.stdout(rank))
            assert printed, by_hand_job.stdout(rank)
            assert int(printed[1]) == call["input"].numel() // by_hand.CHANNELS
            assert int(printed[2]) == values
            assert float(printed[3]) == pytest.approx(call["input"][:, 0].mean().item(), abs=1e-3)
            assert float(printed[4]) == pytest.approx(global_mean[0].item(), abs=1e-3)


test_bare_run = bare_run_test(BY_HAND, reference="by_hand_job")
