"""snippets/syncbn_and_sharding/dcp_save_rank0.py (a "break it" program), run exactly as
docs/syncbn-and-sharding.md says: rank 0 waits inside dcp.save for a plan that rank 1,
waiting at the barrier, never sends, until the 10-second timeout ends the job."""
from __future__ import annotations

import pytest
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, _run, _traceback

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/dcp_save_rank0.py")]


PROGRAM = FOLDER / "dcp_save_rank0.py"
program = import_program(PROGRAM)
TIMEOUT = "Timed out waiting 10000ms"  # gloo's words for the program's 10-second timeout
PEER_GONE = "Connection closed by peer"  # what the other rank sees once the first one has failed


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(PROGRAM, tmp_path_factory, pytestconfig)  # asserts that it failed on its own, in time


class TestSaveFromRank0Only:
    def test_rank_0_is_stuck_in_dcp_save_gathering_the_plans(self, job):
        assert "rank 0: saving" in job.stdout(0)
        assert "waiting at the barrier" not in job.stdout(0)  # it never got out of dcp.save
        tb = _traceback(job, 0)
        assert "dcp.save(" in tb and "in gather_object" in tb and "central_plan = distW.reduce_scatter" in tb, tb

    def test_the_other_ranks_wait_at_the_barrier(self, job):
        for rank in range(1, job.world_size):
            assert f"rank {rank}: waiting at the barrier" in job.stdout(rank)
            tb = _traceback(job, rank)
            assert "dist.barrier()" in tb, tb

    def test_the_short_timeout_ends_it_instead_of_a_hang(self, job):
        errors = [_traceback(job, rank) for rank in range(job.world_size)]
        assert any(TIMEOUT in tb for tb in errors), errors
        assert all(TIMEOUT in tb or PEER_GONE in tb for tb in errors), errors

    def test_no_checkpoint_was_written(self, job):
        folder = job.workdir / program.CHECKPOINT_DIR
        written = sorted(p.name for p in folder.iterdir()) if folder.exists() else []
        assert written == [], written  # no shard file, and no .metadata that would mark it complete


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^rank 0: saving$", r"^rank 1: waiting at the barrier$"))
