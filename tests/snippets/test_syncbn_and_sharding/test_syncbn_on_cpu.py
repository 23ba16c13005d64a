"""snippets/syncbn_and_sharding/syncbn_on_cpu.py (a "break it" program), run exactly as
docs/syncbn-and-sharding.md says: it must fail, in DDP's constructor, after an
evaluation forward that works and a training forward that SyncBatchNorm refuses."""
from __future__ import annotations

import pytest
from conftest import bare_run_test
from torchjob import JobResult
from .lesson import FOLDER, _run, _traceback

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/syncbn_on_cpu.py")]


PROGRAM = FOLDER / "syncbn_on_cpu.py"
TRAIN_ERROR = "SyncBatchNorm expected input tensor to be on GPU"
DDP_ERROR = "ValueError: SyncBatchNorm layers only work with GPU modules"


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(PROGRAM, tmp_path_factory, pytestconfig)  # asserts that it failed on its own


class TestSyncBatchNormOnCPU:
    def test_the_evaluation_forward_works_on_the_cpu(self, job):
        for rank in range(job.world_size):
            assert f"rank {rank}: evaluation forward on the CPU: fine" in job.stdout(rank)

    def test_the_training_forward_refuses_cpu_inputs(self, job):
        for rank in range(job.world_size):
            assert f"rank {rank}: training forward on the CPU: {TRAIN_ERROR}" in job.stdout(rank)

    def test_ddp_refuses_to_wrap_a_cpu_module_with_syncbatchnorm(self, job):
        for rank in range(job.world_size):
            tb = _traceback(job, rank)
            assert DDP_ERROR in tb, f"rank {rank} did not fail in DDP's SyncBatchNorm check:\n{tb}"
            assert "ddp_model = DDP(model)" in tb and "_passing_sync_batchnorm_handle" in tb


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(rf"training forward on the CPU: {TRAIN_ERROR}",))
