"""snippets/syncbn_and_sharding/syncbn_train.py, run exactly as docs/syncbn-and-sharding.md says."""
from __future__ import annotations

import pytest
import torch
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import BATCHNORMS, FOLDER, TOL, _bn_buffers, _global_batches, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/syncbn_train.py")]


TRAIN = FOLDER / "syncbn_train.py"
train = import_program(TRAIN)


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


test_bare_run = bare_run_test(TRAIN, reference="train_job")
