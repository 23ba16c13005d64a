"""snippets/torchrun_launching/find_stuck_rank.py, run exactly as docs/torchrun-launching.md says.

A "fails" program: rank 1 never reaches the monitored barrier; rank 0 gives up after the
barrier's 10-second timeout and its error names rank 1.
"""
from __future__ import annotations

import re

import pytest

from conftest import SNIPPETS, bare_run_test, run_snippet
from coursekit.runspec import read_spec

PROGRAM = SNIPPETS / "torchrun_launching" / "find_stuck_rank.py"
SPEC = read_spec(PROGRAM)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("torchrun_launching/find_stuck_rank.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig):
    return run_snippet(PROGRAM, tmp_path_factory, pytestconfig)


def test_the_stuck_rank_never_reached_the_barrier(job):
    assert "at the monitored barrier" in job.stdout(0)
    assert "at the monitored barrier" not in job.stdout(1)


def test_rank_0_names_the_rank_that_did_not_arrive(job):
    stderr = job.ranks[0].stderr
    # "Ranks 1 failed ...": the list that wait_all_ranks=True collects, not only the first rank
    assert re.search(r"Ranks 1 failed to pass monitoredBarrier in 10000 ms", stderr), job.report()
    assert job.first_failing() is job.ranks[0]  # rank 0 raised; rank 1 was only stopped
    assert not job.ranks[1].failed


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^rank 0: at the monitored barrier$",))
