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
        assert [c["input"].shape[0] for c in calls] == [3, 5]  # the page's numbers
        for rank, call in enumerate(calls):
            assert torch.equal(call["input"], by_hand.make_local_batch(rank)[0])

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


def _targets(world_size: int) -> list[torch.Tensor]:
    """Every rank's targets, from the program's own make_local_batch."""
    return [by_hand.make_local_batch(rank)[1] for rank in range(world_size)]


def _input_grads(job: JobResult) -> list[torch.Tensor]:
    grads = [c["input_grad"] for c in _by_hand_calls(job)]
    assert all(g is not None for g in grads), "every rank's input has a gradient after the backward pass"
    return grads


def _batchnorm_over_the_global_batch(calls: list[dict], targets: list[torch.Tensor]):
    """One BatchNorm2d in one process on all ranks' images together, with the sum of all
    ranks' losses; returns the input's gradient, the layer and the loss."""
    x = torch.cat([c["input"] for c in calls]).requires_grad_()
    reference = nn.BatchNorm2d(by_hand.CHANNELS)  # same initial weight, bias and statistics
    loss = nn.functional.mse_loss(reference(x), torch.cat(targets), reduction="sum")
    loss.backward()
    return x.grad, reference, loss.detach()


def _slices(calls: list[dict]):
    start = 0
    for call in calls:
        n = call["input"].shape[0]
        yield slice(start, start + n)
        start += n


class TestBackwardPass:
    """The layer's backward pass: autograd, through the all-reduce's backward, gives every
    rank's input the gradient of the loss summed over all ranks, as SyncBatchNorm does."""

    def test_input_gradients_equal_batchnorm_over_the_global_batch(self, by_hand_job):
        calls = _by_hand_calls(by_hand_job)
        expected, _, _ = _batchnorm_over_the_global_batch(calls, _targets(by_hand_job.world_size))
        for rank, (grad, rows) in enumerate(zip(_input_grads(by_hand_job), _slices(calls))):
            torch.testing.assert_close(grad, expected[rows], **TOL, msg=lambda m: f"rank {rank}: {m}")

    def test_weight_and_bias_gradients_add_up_to_the_global_ones(self, by_hand_job):
        calls = _by_hand_calls(by_hand_job)
        _, reference, _ = _batchnorm_over_the_global_batch(calls, _targets(by_hand_job.world_size))
        for name in ("weight", "bias"):
            grads = [c[f"{name}_grad"] for c in calls]
            assert all(g is not None for g in grads), f"every rank's {name} has a gradient"
            # what DDP would all-reduce: the ranks' gradients add up to the one process's
            torch.testing.assert_close(torch.stack(grads).sum(0), getattr(reference, name).grad, **TOL)

    def test_they_differ_from_local_or_constant_statistics(self, by_hand_job):
        """The two ways to get it wrong: normalize with each rank's own statistics, or with
        the global ones but treat them as constants (a plain all-reduce that autograd does
        not see); both give other input gradients."""
        calls = _by_hand_calls(by_hand_job)
        targets = _targets(by_hand_job.world_size)
        x = torch.cat([c["input"] for c in calls])
        mean = x.mean(dim=(0, 2, 3), keepdim=True)
        var = x.var(dim=(0, 2, 3), unbiased=False, keepdim=True)
        for rank, (grad, call, target) in enumerate(zip(_input_grads(by_hand_job), calls, targets)):
            local_x = call["input"].clone().requires_grad_()
            nn.functional.mse_loss(nn.BatchNorm2d(by_hand.CHANNELS)(local_x), target, reduction="sum").backward()
            assert not torch.allclose(grad, local_x.grad, **TOL), f"rank {rank}: the gradient of local statistics"
            const_x = call["input"].clone().requires_grad_()
            layer = nn.BatchNorm2d(by_hand.CHANNELS)  # weight 1, bias 0, its eps
            y = (const_x - mean) / torch.sqrt(var + layer.eps) * layer.weight.detach().view(1, -1, 1, 1)
            nn.functional.mse_loss(y, target, reduction="sum").backward()
            assert not torch.allclose(grad, const_x.grad, **TOL), f"rank {rank}: the gradient of constant statistics"

    def test_the_backward_pass_all_reduces_the_gradients_of_the_sums(self, by_hand_job):
        stats = 2 * by_hand.CHANNELS + 1  # sums, sums of squares, count
        for rank in range(by_hand_job.world_size):
            events = by_hand_job.records[rank]["extra"]["events"]
            ops = [e["op"] for e in events]
            assert ops.count("backward") == 1, ops
            forward, backward = events[:ops.index("backward")], events[ops.index("backward") + 1:]
            # the printed statistics, then the layer's
            assert [(e["op"], e["numel"]) for e in forward] == [("all_reduce", stats)] * 2
            assert [(e["op"], e["numel"]) for e in backward] == [("all_reduce", stats)]

    def test_each_rank_prints_its_loss_and_its_input_gradients_norm(self, by_hand_job):
        calls = _by_hand_calls(by_hand_job)
        targets = _targets(by_hand_job.world_size)
        _, _, total = _batchnorm_over_the_global_batch(calls, targets)
        losses = []
        for rank, (call, target, grad) in enumerate(zip(calls, targets, _input_grads(by_hand_job))):
            printed = re.search(r"^rank (\d+): loss (-?[\d.]+); norm of the input's gradient ([\d.]+)$",
                                by_hand_job.stdout(rank), re.M)
            assert printed, by_hand_job.stdout(rank)
            assert int(printed[1]) == rank
            loss = nn.functional.mse_loss(call["output"], target, reduction="sum").item()
            assert float(printed[2]) == pytest.approx(loss, abs=1e-3)
            assert float(printed[3]) == pytest.approx(grad.norm().item(), abs=1e-4)
            losses.append(loss)
        assert sum(losses) == pytest.approx(total.item(), rel=1e-5)  # the ranks' losses add up to the global one


test_bare_run = bare_run_test(BY_HAND, reference="by_hand_job")
