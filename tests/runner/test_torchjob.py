"""The runner itself: hangs and crashes fail fast, with diagnostics, and leave nothing behind."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from torchjob import pids_alive, run_job, worker_pids

PLANTED = Path(__file__).parent / "planted"
LIMIT_S = 15.0

pytestmark = pytest.mark.torchrun


def _run(tmp_path: Path, name: str):
    shutil.copy(PLANTED / name, tmp_path / name)
    return run_job(["torchrun", "--standalone", "--nproc-per-node=2", name], tmp_path, LIMIT_S)


def test_a_deadlock_fails_within_the_limit_with_every_stack_and_nothing_left(tmp_path):
    result = _run(tmp_path, "deadlock.py")
    assert result.timed_out
    assert result.duration_s < LIMIT_S + 10
    pids = worker_pids(result)
    assert len(pids) == 2
    assert pids_alive(pids) == []
    assert result.leftovers == []
    report = result.report()
    assert "TIMED OUT" in report
    # faulthandler's dump from each rank shows where it was stuck
    stacks = [r.stderr for r in result.ranks]
    assert len(stacks) == 2
    for stderr in stacks:
        assert "deadlock.py\", line 8" in stderr, stderr
    with pytest.raises(AssertionError, match="TIMED OUT"):
        result.check(world_size=2)


def test_a_crashing_rank_fails_the_job_and_is_reported_first(tmp_path):
    result = _run(tmp_path, "crash.py")
    assert not result.timed_out
    assert result.returncode != 0  # SIGABRT or exit 1: only "non-zero" is reliable
    assert result.duration_s < LIMIT_S
    assert pids_alive(worker_pids(result)) == []
    report = result.report()
    first = report.index("=== first failing: local rank 1")
    assert report.index("planted crash on rank 1") > first
    assert first < report.index("=== local rank 0, attempt 0: stdout ===")
    with pytest.raises(AssertionError):
        result.check(world_size=2)


def test_exiting_zero_without_doing_the_work_is_not_a_pass(tmp_path):
    result = _run(tmp_path, "no_work.py")
    assert result.returncode == 0
    with pytest.raises(AssertionError, match=r"no record from rank\(s\) \[0, 1\]|never reached destroy_process_group"):
        result.check(world_size=2)
