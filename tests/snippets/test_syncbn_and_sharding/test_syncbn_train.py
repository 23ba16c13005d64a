"""snippets/syncbn_and_sharding/syncbn_train.py, run exactly as docs/syncbn-and-sharding.md says."""
from __future__ import annotations

import pytest
import torch
from torch import nn
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import BATCHNORMS, FOLDER, _bn_buffers, _global_batches, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/syncbn_train.py")]


TRAIN = FOLDER / "syncbn_train.py"
train = import_program(TRAIN)
# The program runs as readers run it, with PyTorch's defaults, and those let cuDNN compute
# fp32 convolutions in TF32 on Ampere and newer GPUs (torch.backends.cudnn.allow_tf32 is
# True; its 10-bit mantissa is good to about 1e-3 relative). The reference runs in fp32 on
# the CPU, so the tolerances allow for TF32; the statistics of one rank's batch alone
# differ from the global ones by far more (tens of percent).
TF32_TOL = dict(rtol=1e-2, atol=1e-3)


@pytest.fixture(scope="module")
def train_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(TRAIN, tmp_path_factory, pytestconfig)


class TestSyncBatchNormTraining:
    def test_the_ddp_module_holds_syncbatchnorm_on_the_gpu(self, train_job):
        plain = {name: type(m).__name__ for name, m in train.Net().named_modules()}
        for rank in range(train_job.world_size):
            ddp = train_job.records[rank]["extra"]["ddp"]
            assert ddp is not None, f"rank {rank} never ran a DistributedDataParallel forward"
            assert ddp["device"] == "cuda"
            assert ddp["types"].keys() == plain.keys()
            for name, kind in plain.items():
                assert ddp["types"][name] == ("SyncBatchNorm" if kind in BATCHNORMS else kind), name
        assert "epoch 1: loss" in train_job.stdout(0)

    def test_running_statistics_equal_plain_batchnorm_over_the_global_batch(self, train_job):
        x, _ = next(_global_batches(train_job, train.make_dataset(), train.BATCH_SIZE, epoch=0))
        assert len(x) == train.BATCH_SIZE * train_job.world_size
        reference = train.Net()  # plain BatchNorm layers, the same state dict keys
        reference.load_state_dict(train_job.records[0]["first_step"]["before"])
        reference.train()
        with torch.no_grad():
            reference(x)
        expected = _bn_buffers(reference.state_dict())
        assert len(expected) == 2 * sum(type(m).__name__ in BATCHNORMS for m in reference.modules())
        for rank in range(train_job.world_size):
            after = _bn_buffers(train_job.records[rank]["first_step"]["after"])
            assert after.keys() == expected.keys()
            for name in expected:
                torch.testing.assert_close(after[name], expected[name], **TF32_TOL)

    def test_running_statistics_differ_from_one_ranks_local_batch(self, train_job):
        x, _ = next(_global_batches(train_job, train.make_dataset(), train.BATCH_SIZE, epoch=0))
        after = _bn_buffers(train_job.records[0]["first_step"]["after"])
        local = train.Net()
        local.load_state_dict(train_job.records[0]["first_step"]["before"])
        local.train()
        with torch.no_grad():
            local(x[: train.BATCH_SIZE])  # rank 0's own batch only
        local_stats = _bn_buffers(local.state_dict())
        assert any(not torch.allclose(after[n], local_stats[n], **TF32_TOL) for n in local_stats)


def _rows(rank: int) -> slice:
    """A rank's samples in the first global batch."""
    return slice(rank * train.BATCH_SIZE, (rank + 1) * train.BATCH_SIZE)


def _syncbn_calls(job: JobResult, rank: int) -> list[dict]:
    """A rank's SyncBatchNorm forwards of the first step, in forward order."""
    layers = sum(type(m).__name__ in BATCHNORMS for m in train.Net().modules())
    calls = [c for c in job.records[rank]["extra"]["batchnorm"] if c["type"] == "SyncBatchNorm"][:layers]
    assert len(calls) == layers and all(c["training"] for c in calls)
    return calls


class _GivenReLU(nn.Module):
    """A ReLU that passes the elements ``mask`` says, whatever their sign here."""

    def __init__(self, mask: torch.Tensor) -> None:
        super().__init__()
        self.mask = mask

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.mask


def _job_relu_masks(job: JobResult) -> list[torch.Tensor]:
    """Per BatchNorm layer, which elements of its output the ReLU after it passed in the
    job's first step (positive ones), all ranks' rows in rank order."""
    calls = [_syncbn_calls(job, rank) for rank in range(job.world_size)]
    return [torch.cat([c[layer]["output"] for c in calls]) > 0 for layer in range(len(calls[0]))]


def _first_step_in_one_process(job: JobResult, rank: int | None = None, relu_masks: list[torch.Tensor] | None = None):
    """The program's first step redone in one process with plain BatchNorm layers, from the
    weights rank 0 started with, on the first global batch (or on one rank's samples
    only), with the program's loss; with ``relu_masks``, every ReLU (each follows a
    BatchNorm layer) passes the elements the job's did. Returns the parameters'
    gradients and, per BatchNorm layer in forward order, its input's gradient."""
    x, y = next(_global_batches(job, train.make_dataset(), train.BATCH_SIZE, epoch=0))
    if rank is not None:
        x, y = x[_rows(rank)], y[_rows(rank)]
    model = train.Net()
    model.load_state_dict(job.records[0]["first_step"]["before"])
    model.train()
    if relu_masks is not None:
        masks = iter(relu_masks)
        for block in (model.features, model.head):
            for i, module in enumerate(block):
                if isinstance(module, nn.ReLU):
                    block[i] = _GivenReLU(next(masks))
        assert next(masks, None) is None, "one ReLU after every BatchNorm layer"
    inputs = []

    def keep_input(module, args, output) -> None:
        args[0].retain_grad()
        inputs.append(args[0])

    for module in model.modules():
        if type(module).__name__ in BATCHNORMS:
            module.register_forward_hook(keep_input)
    nn.CrossEntropyLoss()(model(x), y).backward()
    return {n: p.grad for n, p in model.named_parameters()}, [t.grad for t in inputs]


class TestSyncBatchNormGradients:
    """The first step's gradients, against one process running plain BatchNorm on the
    global batch.

    Rank r computes L_r, the mean cross-entropy over its B samples. SyncBatchNorm's forward
    pass normalizes with the global statistics, so every rank's outputs are the rows of
    the one process's outputs; its backward pass all-reduces two per-channel sums of the
    incoming gradient, so the gradient it hands to rank r's input is that of
    L_1 + ... + L_W (every loss depends on every rank's input through the statistics),
    with no division by W. Parameters then get, on rank r, the part of
    d(L_1 + ... + L_W)/d(param) that flows through rank r's samples, and DDP's all-reduce
    averages those parts: d(L_1 + ... + L_W)/d(param) / W. With W equal batches of B,
    (L_1 + ... + L_W) / W is the mean cross-entropy over the W*B samples, the loss of the
    one process. So: the DDP model's gradients before the step (sitecustomize records
    them) equal the one process's, and a SyncBatchNorm input's gradient on rank r is W
    times the one process's gradient for rank r's rows (DDP averages parameters'
    gradients, never activations'). A CPU emulation (a differentiable by-hand SyncBatchNorm
    under DDP on gloo) matched both to within 1e-5.

    TF32 rounds the convolutions' outputs by about 1e-3 relative, and a value that close to
    zero may come out with the other sign: the ReLU after it then passes or blocks a whole
    element of the gradient (an emulation of TF32 on the CPU did so in about every second
    batch, up to 17 times TF32_TOL). So the reference's ReLUs pass exactly the elements the
    job's passed, those where the job's BatchNorm output was positive; elsewhere the
    values differ by the rounding only (the same emulation then stayed within 0.62 of
    TF32_TOL over 64 batches and initial weights).
    """

    def test_parameter_gradients_equal_plain_batchnorm_over_the_global_batch(self, train_job):
        x, _ = next(_global_batches(train_job, train.make_dataset(), train.BATCH_SIZE, epoch=0))
        assert len(x) == train.BATCH_SIZE * train_job.world_size  # equal batches: the mean of means is the mean
        expected, _ = _first_step_in_one_process(train_job, relu_masks=_job_relu_masks(train_job))
        assert {"features.0.weight", "features.3.weight"} <= expected.keys()  # the convolutions
        for rank in range(train_job.world_size):
            grads = train_job.records[rank]["first_step"]["grads"]
            assert grads.keys() == expected.keys()
            for name in expected:
                torch.testing.assert_close(grads[name], expected[name], **TF32_TOL,
                                           msg=lambda m: f"rank {rank}, {name}: {m}")

    def test_syncbatchnorm_input_gradients_are_those_of_all_ranks_losses(self, train_job):
        world_size = train_job.world_size
        _, expected = _first_step_in_one_process(train_job, relu_masks=_job_relu_masks(train_job))
        for rank in range(world_size):
            for layer, (call, grad) in enumerate(zip(_syncbn_calls(train_job, rank), expected)):
                assert call["input_grad"] is not None, f"rank {rank}, layer {layer}: no gradient reached the input"
                torch.testing.assert_close(call["input_grad"], world_size * grad[_rows(rank)], **TF32_TOL,
                                           msg=lambda m: f"rank {rank}, BatchNorm layer {layer}: {m}")

    def test_they_differ_from_plain_batchnorm_under_ddp(self, train_job):
        """Plain BatchNorm under DDP: each rank's own statistics, its own loss's gradient
        for its inputs, and DDP's average of the parameters' gradients."""
        world_size = train_job.world_size
        local = [_first_step_in_one_process(train_job, rank) for rank in range(world_size)]
        averaged = {n: torch.stack([params[n] for params, _ in local]).mean(0) for n in local[0][0]}
        grads = train_job.records[0]["first_step"]["grads"]
        for name in ("features.0.weight", "features.3.weight"):
            assert not torch.allclose(grads[name], averaged[name], **TF32_TOL), name
        for rank in range(world_size):
            for layer, (call, grad) in enumerate(zip(_syncbn_calls(train_job, rank), local[rank][1])):
                assert call["input_grad"] is not None, f"rank {rank}, layer {layer}: no gradient reached the input"
                assert not torch.allclose(call["input_grad"], grad, **TF32_TOL), f"rank {rank}, BatchNorm layer {layer}"

    def test_the_backward_pass_all_reduces_two_sums_per_channel(self, train_job):
        """The first backward pass's all-reduces through torch.distributed (DDP's own run
        in C++ and are not seen): one per SyncBatchNorm layer, in reverse layer order, of
        2 * its channels (the sums of the gradient and of the gradient times the centred
        input)."""
        channels = [m.num_features for m in train.Net().modules() if type(m).__name__ in BATCHNORMS]
        for rank in range(train_job.world_size):
            events = train_job.records[rank]["extra"]["events"]
            ops = [e["op"] for e in events]
            start = ops.index("backward") + 1
            end = ops.index("linear", start) if "linear" in ops[start:] else len(ops)  # the next forward
            reduced = [e["numel"] for e in events[start:end] if e["op"] == "all_reduce"]
            assert reduced == [2 * c for c in reversed(channels)], events[start:end]


test_bare_run = bare_run_test(TRAIN, reference="train_job")
