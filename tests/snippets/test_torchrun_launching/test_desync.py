"""snippets/torchrun_launching/desync.py, run exactly as docs/torchrun-launching.md says.

A "fails" program: rank 0 has one batch more than rank 1, so its seventh collective is an
all_reduce while rank 1's is an all_gather. With TORCH_DISTRIBUTED_DEBUG=DETAIL on the
page's line, each rank raises "Detected mismatch between collectives" naming its own
collective, its sequence number and its tensor's shape, instead of hanging.
"""
from __future__ import annotations

import re

import pytest

from conftest import SNIPPETS, bare_run_test, run_snippet
from coursekit.runspec import read_spec

PROGRAM = SNIPPETS / "torchrun_launching" / "desync.py"
SPEC = read_spec(PROGRAM)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("torchrun_launching/desync.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig):
    return run_snippet(PROGRAM, tmp_path_factory, pytestconfig, exact_world_size=2)


def test_the_line_sets_detail():
    assert ("TORCH_DISTRIBUTED_DEBUG", "DETAIL") in SPEC.lines[0].env


def test_rank_1_ran_out_of_batches_first(job):
    assert "rank 1: trained on 3 batches" in job.stdout(1)
    assert "trained on" not in job.stdout(0)  # rank 0 never finished its fourth batch


def test_each_rank_names_its_own_collective_sequence_number_and_shape(job):
    mismatch = "Detected mismatch between collectives on ranks"
    assert mismatch in job.ranks[0].stderr and mismatch in job.ranks[1].stderr, job.report()
    # 3 batches x 2 parameters: six all_reduces went through on both ranks; number 6 differs
    assert re.search(r"Rank 0 is running collective: CollectiveFingerPrint\(SequenceNumber=6, OpType=ALLREDUCE, "
                     r"TensorShape=\[1, 8\]", job.ranks[0].stderr), job.ranks[0].stderr
    assert re.search(r"Rank 1 is running collective: CollectiveFingerPrint\(SequenceNumber=6, OpType=ALLGATHER, "
                     r"TensorShape=\[1\]", job.ranks[1].stderr), job.ranks[1].stderr


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^rank 1: trained on 3 batches$",))
