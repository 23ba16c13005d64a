"""A bare run's terminal, where the ranks' lines can share a line, compared with the
verified run's per-rank output."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from run_output import printed_lines, same_lines, untangle
from torchjob import JobResult, RankLog, parse_line, run_bare

PLANTED = Path(__file__).parent / "planted"


def test_untangle_splits_a_line_two_ranks_wrote_into_and_keeps_what_it_cannot_split():
    known = ["rank 0: step 2, loss 7.4223", "rank 1: step 2, loss 6.7349"]
    tangled = ["rank 1: step 2, loss 6.7349rank 0: step 2, loss 7.4223", "rank 0: step 2, loss 7.4223"]
    assert untangle(tangled, known) == [known[1], known[0], known[0]]
    assert untangle(["rank 1: step 2, loss 6.7349rank 0: step 9"], known) == ["rank 1: step 2, loss 6.7349rank 0: step 9"]
    assert untangle(["anything"], []) == ["anything"]


def test_the_lines_of_a_line_that_runs_two_jobs_untangle_what_their_ranks_wrote_into_one_line():
    # the CI terminal of dcp_resume.py's bare run: rank 1's newline came after rank 0's text
    fresh = "rank {} of 2: starting at step 0 (fresh), holding 32 of 64 rows of 0.0.weight"
    logs = [RankLog(r, 0, fresh.format(r) + "\n", "") for r in (0, 1)]  # the first job's logs ...
    logs += [RankLog(r, 0, f"rank {r} of 3: starting at step 3 (from step-0003)\n", "") for r in (0, 1, 2)]  # ... and the second's
    harness = JobResult(parse_line("bash run.sh"), 0, 1.0, False, "", ranks=logs)
    known = printed_lines([harness])
    assert sorted(known) == sorted([fresh.format(0), fresh.format(1)] + [f"rank {r} of 3: starting at step 3 (from step-0003)"
                                                                          for r in range(3)])
    assert untangle([fresh.format(1) + fresh.format(0)], known) == [fresh.format(1), fresh.format(0)]


@pytest.mark.torchrun
def test_torchrun_workers_write_unbuffered_and_a_bare_run_still_compares_line_for_line(tmp_path):
    shutil.copy(PLANTED / "tangle.py", tmp_path / "tangle.py")
    result = run_bare("torchrun --standalone --nproc-per-node=2 tangle.py", tmp_path, 25.0)
    result.check_exit()
    # torchrun starts workers with ``python -u`` (torch/distributed/run.py), so each
    # print is two writes, text then newline
    assert "rank 0: stdout write_through=True" in result.stdout_text
    reference = {f"rank {r}": [f"rank {r}: stdout write_through=True"] + [f"rank {r}: line {i}" for i in range(300)]
                 for r in (0, 1)}
    assert same_lines([result], reference) == ([], [])
