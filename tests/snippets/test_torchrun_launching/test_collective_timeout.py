"""snippets/torchrun_launching/collective_timeout.py, run exactly as docs/torchrun-launching.md says.

A "fails" program: the one-rank all_reduce of stuck.py, but with a 10-second process-group
timeout and ``@record`` on ``main``. The job must end on its own, through the timeout, and
torchrun's failure summary must carry the root-cause rank's traceback down to the line of
the program.
"""
from __future__ import annotations

import re

import pytest
from torch.distributed.constants import default_pg_nccl_timeout

from conftest import SNIPPETS, bare_run_test, run_snippet
from coursekit.runspec import read_spec

PROGRAM = SNIPPETS / "torchrun_launching" / "collective_timeout.py"
SPEC = read_spec(PROGRAM)
TIMEOUT_MS = 10000  # the program's timedelta(seconds=10)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("torchrun_launching/collective_timeout.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig):
    return run_snippet(PROGRAM, tmp_path_factory, pytestconfig)


def _root_cause(job) -> str:
    summary = job.agent_output
    assert "Root Cause (first observed failure):" in summary, job.report()
    return summary[summary.index("Root Cause (first observed failure):"):]


def test_the_waiting_rank_fails_when_the_timeout_expires(job):
    # Both ranks wait (rank 0 in all_reduce, rank 1 in barrier); whichever times out first
    # exits, and the other then sees "Connection closed by peer", as the page says.
    errors = [log.stdout + log.stderr for log in job.ranks]
    assert any(f"Timed out waiting {TIMEOUT_MS}ms" in e for e in errors), job.report()
    assert all(f"Timed out waiting {TIMEOUT_MS}ms" in e or "Connection closed by peer" in e for e in errors), job.report()
    assert job.duration_s > TIMEOUT_MS / 1000  # it waited the timeout first
    assert not job.timed_out and job.returncode != 0


def test_every_rank_fails_and_none_printed_the_mean(job):
    assert all(log.failed for log in job.ranks), job.report()
    assert "mean loss" not in "".join(log.stdout for log in job.ranks)


def test_the_summary_names_a_root_cause_rank_with_its_traceback(job):
    cause = _root_cause(job)
    assert re.search(r"rank\s+: \d+ \(local_rank: \d+\)", cause)
    assert re.search(r"error_file: \S+error\.json", cause), cause  # @record wrote it
    assert re.search(r'traceback : Traceback \(most recent call last\):.*collective_timeout\.py", line \d+, in main',
                     cause, re.S), cause
    assert f"Timed out waiting {TIMEOUT_MS}ms" in cause or "Connection closed by peer" in cause, cause


def test_the_default_process_group_timeout_is_30_minutes_with_gloo():
    from torch.distributed.constants import default_pg_timeout

    assert default_pg_timeout.total_seconds() == 30 * 60


@pytest.mark.skipif(default_pg_nccl_timeout is None, reason="Requires: [torch built with NCCL]")
def test_the_default_process_group_timeout_is_10_minutes_with_nccl():
    assert default_pg_nccl_timeout.total_seconds() == 10 * 60


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^rank 0: local loss [\d.]+$", r"^rank 1: local loss [\d.]+$"))
