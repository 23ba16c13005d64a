"""The programs of docs/syncbn-and-sharding.md, each run exactly as the page says.

One test class per program. Each test checks one claim of the page against what the
job really did on every rank, read from the records the harness leaves
(tests/harness/sitecustomize.py and tests/harness/record_syncbn_and_sharding.py), and
compares it with the same computation done in one process on the whole batch.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn

from conftest import SNIPPETS, import_program, run_snippet
from torchjob import JobResult

FOLDER = SNIPPETS / "syncbn_and_sharding"
PLUGIN = "record_syncbn_and_sharding"
TOL = dict(rtol=1e-4, atol=1e-5)
BATCHNORMS = {"BatchNorm1d", "BatchNorm2d", "BatchNorm3d"}

pytestmark = [pytest.mark.torchrun]


def _run(program: Path, tmp_path_factory, pytestconfig, extra_env: dict[str, str] | None = None) -> JobResult:
    """Run a program's launch command on a scratch copy of its folder, with the recorder."""
    return run_snippet(program, tmp_path_factory, pytestconfig, plugins=(PLUGIN,), extra_env=extra_env)


def _global_batches(job: JobResult, dataset, batch_size: int, epoch: int):
    """The global batches of one epoch: step by step, every rank's batch in rank order."""
    shares = [dict(job.records[r]["sampler_epochs"])[epoch] for r in range(job.world_size)]
    steps = -(-len(shares[0]) // batch_size)
    for step in range(steps):
        indices = [i for share in shares for i in share[step * batch_size:(step + 1) * batch_size]]
        yield dataset[indices]


def _adam_in_one_process(program, job: JobResult) -> tuple[nn.Module, torch.optim.Optimizer, dict[str, torch.Tensor]]:
    """A program's training redone in one process on the job's global batches with plain
    Adam (the program's make_model, make_dataset, LR, EPOCHS, BATCH_SIZE); returns the
    model, its optimizer and a copy of the initial state."""
    torch.manual_seed(0)
    model = program.make_model()
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=program.LR)
    dataset = program.make_dataset()
    for epoch in range(program.EPOCHS):
        for x, y in _global_batches(job, dataset, program.BATCH_SIZE, epoch):
            optimizer.zero_grad()
            nn.MSELoss()(model(x), y).backward()
            optimizer.step()
    return model, optimizer, initial


def _files_saved(job: JobResult, rank: int) -> list[str]:
    """The files a rank wrote with torch.save (collectives that send Python objects, such
    as ZeroRedundancyOptimizer.consolidate_state_dict, torch.save into memory buffers)."""
    return [f for f in job.records[rank]["saves"] if not f.startswith("<")]


def _bn_buffers(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v for k, v in state.items() if k.endswith(("running_mean", "running_var"))}


# --- convert_syncbn.py ------------------------------------------------------------------

CONVERT = FOLDER / "convert_syncbn.py"
convert = import_program(CONVERT)


@pytest.fixture(scope="module")
def convert_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(CONVERT, tmp_path_factory, pytestconfig)


@pytest.mark.verifies("syncbn_and_sharding/convert_syncbn.py")
class TestConvertSyncBatchNorm:
    def test_every_batchnorm_layer_is_replaced_on_every_rank(self, convert_job):
        for rank in range(convert_job.world_size):
            calls = convert_job.records[rank]["extra"]["convert"]
            assert len(calls) == 1
            before, after = calls[0]["before"], calls[0]["after"]
            swapped = [name for name, m in before.items() if m["type"] in BATCHNORMS]
            assert {before[n]["type"] for n in swapped} == {"BatchNorm1d", "BatchNorm2d"}  # nested, 1d and 2d
            assert len(swapped) == sum(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in convert.Net().modules())
            assert after.keys() == before.keys()
            for name in swapped:
                assert after[name]["type"] == "SyncBatchNorm", name
            assert not [n for n, m in after.items() if m["type"] in BATCHNORMS]

    def test_the_swapped_layers_keep_their_parameters_and_statistics(self, convert_job):
        for rank in range(convert_job.world_size):
            call = convert_job.records[rank]["extra"]["convert"][0]
            for name, module in call["before"].items():
                if module["type"] in BATCHNORMS:
                    # the same tensor objects: weight, bias, running_mean, running_var, num_batches_tracked
                    assert set(module["tensors"]) == {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}
                    assert call["after"][name]["tensors"] == module["tensors"], name
                else:
                    assert call["after"][name] == module, f"{name} changed although it is no BatchNorm"

    def test_the_printed_model_shows_syncbatchnorm_only(self, convert_job):
        out = convert_job.stdout(0)
        n_bn = sum(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in convert.Net().modules())
        assert out.count("SyncBatchNorm(") == n_bn
        assert not re.search(r"\bBatchNorm[123]d\(", out)


# --- syncbn_train.py (CUDA only) --------------------------------------------------------

TRAIN = FOLDER / "syncbn_train.py"
train = import_program(TRAIN)


@pytest.fixture(scope="module")
def train_job(tmp_path_factory, pytestconfig) -> JobResult:
    # TF32 convolutions would blur the comparison with float32 on the CPU
    return _run(TRAIN, tmp_path_factory, pytestconfig, extra_env={"NVIDIA_TF32_OVERRIDE": "0"})


@pytest.mark.verifies("syncbn_and_sharding/syncbn_train.py")
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
                torch.testing.assert_close(after[name], expected[name], **TOL)

    def test_running_statistics_differ_from_one_ranks_local_batch(self, train_job):
        x, _ = next(_global_batches(train_job, train.make_dataset(), train.BATCH_SIZE, epoch=0))
        after = _bn_buffers(train_job.records[0]["first_step"]["after"])
        local = train.Net()
        local.load_state_dict(train_job.records[0]["first_step"]["before"])
        local.train()
        with torch.no_grad():
            local(x[: train.BATCH_SIZE])  # rank 0's own batch only
        local_stats = _bn_buffers(local.state_dict())
        assert any(not torch.allclose(after[n], local_stats[n], **TOL) for n in local_stats)


# --- syncbn_by_hand.py ------------------------------------------------------------------

BY_HAND = FOLDER / "syncbn_by_hand.py"
by_hand = import_program(BY_HAND)


@pytest.fixture(scope="module")
def by_hand_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(BY_HAND, tmp_path_factory, pytestconfig)


def _by_hand_calls(job: JobResult) -> list[dict]:
    calls = [job.records[r]["extra"]["by_hand"] for r in range(job.world_size)]
    assert all(len(c) == 1 for c in calls), "one training-mode forward per rank"
    return [c[0] for c in calls]


@pytest.mark.verifies("syncbn_and_sharding/syncbn_by_hand.py")
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


# --- fsdp_train.py ----------------------------------------------------------------------

FSDP = FOLDER / "fsdp_train.py"
fsdp = import_program(FSDP)


@pytest.fixture(scope="module")
def fsdp_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(FSDP, tmp_path_factory, pytestconfig)


def _expected_rows(rows: int, world_size: int, rank: int) -> int:
    """Rows of dim 0 that rank ``rank`` holds: torch.chunk's split, the last ranks may get fewer or none."""
    per_rank = -(-rows // world_size)
    return max(0, min(rows, (rank + 1) * per_rank) - rank * per_rank)


@pytest.mark.verifies("syncbn_and_sharding/fsdp_train.py")
class TestFullyShard:
    def test_each_rank_stores_its_dim0_shard_of_every_parameter(self, fsdp_job):
        ws = fsdp_job.world_size
        shapes = [tuple(p.shape) for p in fsdp.make_model().parameters()]
        for rank in range(ws):
            steps = fsdp_job.records[rank]["extra"]["sharded_steps"]
            assert steps, f"rank {rank} never stepped an optimizer over sharded (DTensor) parameters"
            per_rank = -(-len(fsdp.make_dataset()) // ws)  # DistributedSampler pads to equal shares
            assert len(steps) == fsdp.EPOCHS * -(-per_rank // fsdp.BATCH_SIZE)
            params = steps[-1]
            assert [p["shape"] for p in params] == shapes
            for p in params:
                assert p["local_shape"] == (_expected_rows(p["shape"][0], ws, rank), *p["shape"][1:])

    def test_gradients_and_optimizer_state_are_sharded_the_same_way(self, fsdp_job):
        for rank in range(fsdp_job.world_size):
            for p in fsdp_job.records[rank]["extra"]["sharded_steps"][-1]:
                assert p["grad_local_shape"] == p["local_shape"]
                assert p["state"] == {"exp_avg": p["local_shape"], "exp_avg_sq": p["local_shape"]}

    def test_each_rank_holds_about_its_share_of_the_parameter_bytes(self, fsdp_job):
        ws = fsdp_job.world_size
        held = []
        for rank in range(ws):
            params = fsdp_job.records[rank]["extra"]["sharded_steps"][-1]
            local = sum(torch.Size(p["local_shape"]).numel() * p["element_size"] for p in params)
            total = sum(torch.Size(p["shape"]).numel() * p["element_size"] for p in params)
            printed = re.search(r"rank (\d+) holds ([\d,]+) of ([\d,]+) parameter bytes", fsdp_job.stdout(rank))
            assert printed and int(printed[1]) == rank
            assert (int(printed[2].replace(",", "")), int(printed[3].replace(",", ""))) == (local, total)
            # off from an even split by at most one row of each parameter
            slack = sum(torch.Size(p["shape"][1:]).numel() * p["element_size"] for p in params)
            assert abs(local - total / ws) <= slack
            held.append(local)
        assert sum(held) == total

    def test_gathered_state_matches_the_same_training_in_one_process(self, fsdp_job):
        assert _files_saved(fsdp_job, 0) == [fsdp.CHECKPOINT]
        assert all(_files_saved(fsdp_job, r) == [] for r in range(1, fsdp_job.world_size))
        saved = torch.load(fsdp_job.workdir / fsdp.CHECKPOINT, weights_only=True)

        model, _, initial = _adam_in_one_process(fsdp, fsdp_job)
        assert saved.keys() == model.state_dict().keys()
        for name, value in model.state_dict().items():
            assert saved[name].shape == value.shape  # full, not a shard
            torch.testing.assert_close(saved[name], value, **TOL)
            assert not torch.allclose(saved[name], initial[name], **TOL), f"{name} did not train"


# --- zero_optimizer.py ------------------------------------------------------------------

ZERO = FOLDER / "zero_optimizer.py"
with warnings.catch_warnings():
    # torch 2.13: importing torch.distributed.optim runs the deprecated torch.jit.script
    # and torch.jit.interface, and this suite turns warnings into errors
    warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated", category=DeprecationWarning)
    zero = import_program(ZERO)


@pytest.fixture(scope="module")
def zero_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(ZERO, tmp_path_factory, pytestconfig)


@pytest.mark.verifies("syncbn_and_sharding/zero_optimizer.py")
class TestZeroRedundancyOptimizer:
    def test_each_rank_keeps_optimizer_state_only_for_its_partition(self, zero_job):
        shapes = {n: tuple(p.shape) for n, p in zero.make_model().named_parameters()}
        partitions = []
        for rank in range(zero_job.world_size):
            rec = zero_job.records[rank]["extra"]["zero"]
            assert rec is not None, f"rank {rank} never stepped a ZeroRedundancyOptimizer"
            assert rec["all_params"] == list(shapes)  # the wrapper sees every parameter
            assert set(rec["state"]) == set(rec["params"])  # state only for its own ones
            for name in rec["params"]:  # whole tensors: a parameter is never split
                assert rec["state"][name] == {"step": (), "exp_avg": shapes[name], "exp_avg_sq": shapes[name]}
            assert 0 < len(rec["params"]) < len(shapes)
            partitions.append(set(rec["params"]))
        assert sum(len(p) for p in partitions) == len(shapes)  # disjoint ...
        assert set().union(*partitions) == set(shapes)  # ... and together complete

    def test_the_printed_partition_matches_the_optimizer_state(self, zero_job):
        shapes = {n: torch.Size(p.shape).numel() for n, p in zero.make_model().named_parameters()}
        for rank in range(zero_job.world_size):
            params = zero_job.records[rank]["extra"]["zero"]["params"]
            printed = re.search(r"rank (\d+) keeps Adam state for (\d+) of (\d+) parameter tensors, ([\d,]+) of ([\d,]+) values",
                                zero_job.stdout(rank))
            assert printed and int(printed[1]) == rank
            assert (int(printed[2]), int(printed[3])) == (len(params), len(shapes))
            assert int(printed[4].replace(",", "")) == sum(shapes[n] for n in params)
            assert int(printed[5].replace(",", "")) == sum(shapes.values())

    def test_trained_parameters_match_plain_adam(self, zero_job):
        model, _, _ = _adam_in_one_process(zero, zero_job)
        for rank in range(zero_job.world_size):
            final = zero_job.records[rank]["final_state"]
            assert final.keys() == model.state_dict().keys()
            for name, value in model.state_dict().items():
                torch.testing.assert_close(final[name], value, **TOL)

    def test_the_consolidated_checkpoint_holds_the_whole_adam_state(self, zero_job):
        assert _files_saved(zero_job, 0) == [zero.CHECKPOINT]
        assert all(_files_saved(zero_job, r) == [] for r in range(1, zero_job.world_size))
        saved = torch.load(zero_job.workdir / zero.CHECKPOINT, weights_only=True)
        model, optimizer, _ = _adam_in_one_process(zero, zero_job)
        expected = optimizer.state_dict()["state"]
        assert sorted(saved["optimizer"]["state"]) == sorted(expected)
        for index, state in expected.items():
            for key in ("exp_avg", "exp_avg_sq"):
                torch.testing.assert_close(saved["optimizer"]["state"][index][key], state[key], **TOL)
        for name, value in model.state_dict().items():
            torch.testing.assert_close(saved["model"][name], value, **TOL)


# --- sharded_checkpoint.py --------------------------------------------------------------

CKPT = FOLDER / "sharded_checkpoint.py"
ckpt = import_program(CKPT)


@pytest.fixture(scope="module")
def ckpt_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(CKPT, tmp_path_factory, pytestconfig)


def _tensors(flat: dict, prefix: str) -> dict[str, torch.Tensor]:
    return {k: v for k, v in flat.items() if k.startswith(prefix) and isinstance(v, torch.Tensor) and v.dim() > 0}


@pytest.mark.verifies("syncbn_and_sharding/sharded_checkpoint.py")
class TestShardedCheckpoint:
    def test_every_rank_writes_its_own_file(self, ckpt_job):
        files = sorted(p.name for p in (ckpt_job.workdir / ckpt.CHECKPOINT_DIR).iterdir())
        assert files == sorted([".metadata"] + [f"__{r}_0.distcp" for r in range(ckpt_job.world_size)])

    def test_the_reloaded_state_equals_the_saved_one_on_every_rank(self, ckpt_job):
        n_params = len(list(ckpt.make_model().parameters()))
        for rank in range(ckpt_job.world_size):
            rec = ckpt_job.records[rank]["extra"]["dcp"]
            saved, restored = rec["saved"], rec["restored"]
            assert len(_tensors(saved, "model/")) == n_params
            assert len(_tensors(saved, "optimizer/state/")) == 2 * n_params  # exp_avg, exp_avg_sq
            assert restored.keys() == {k for k in saved if k.startswith(("model/", "optimizer/state/"))}
            for key in restored:
                if isinstance(saved[key], torch.Tensor):
                    assert torch.equal(restored[key], saved[key]), f"rank {rank}: {key}"
                else:
                    assert restored[key] == saved[key], f"rank {rank}: {key}"
            assert int(saved["optimizer/state/0.0.weight/step"]) == ckpt.STEPS

    def test_the_fresh_model_differed_before_loading(self, ckpt_job):
        for rank in range(ckpt_job.world_size):
            rec = ckpt_job.records[rank]["extra"]["dcp"]
            before = _tensors(rec["before_load"], "model/")
            assert before.keys() == _tensors(rec["saved"], "model/").keys()
            assert all(not torch.equal(before[k], rec["saved"][k]) for k in before if before[k].numel())

    def test_the_files_hold_the_full_state_that_one_process_can_read(self, ckpt_job, tmp_path):
        from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

        dcp_to_torch_save(ckpt_job.workdir / ckpt.CHECKPOINT_DIR, tmp_path / "full.pt")
        full = torch.load(tmp_path / "full.pt", weights_only=False)
        saved = [ckpt_job.records[r]["extra"]["dcp"]["saved"] for r in range(ckpt_job.world_size)]
        for key in _tensors(saved[0], ""):
            section, *path = key.split("/")
            value = full[section]
            for part in path:
                value = value[part]
            shards = torch.cat([s[key] for s in saved])  # dim-0 shards in rank order
            assert torch.equal(value, shards), key
